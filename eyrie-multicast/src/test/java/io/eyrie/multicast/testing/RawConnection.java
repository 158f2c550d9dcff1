package io.eyrie.multicast.testing;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A blocking, frame-level connection to a node's client port, for protocol tests. */
public final class RawConnection implements AutoCloseable {
  private final Socket socket;
  private final DataInputStream in;
  private final DataOutputStream out;
  private final Codec codec;

  public RawConnection(String host, int port, Codec codec) throws IOException {
    this(plain(host, port), codec);
  }

  /**
   * Frames over a socket already connected (and, for a TLS port, already an {@code SSLSocket}).
   *
   * @param connected the socket
   * @param codec the codec of the frames
   */
  public RawConnection(Socket connected, Codec codec) throws IOException {
    this.socket = connected;
    socket.setSoTimeout(30_000);
    this.in = new DataInputStream(socket.getInputStream());
    this.out = new DataOutputStream(socket.getOutputStream());
    this.codec = codec;
  }

  private static Socket plain(String host, int port) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(host, port), 5000);
    return s;
  }

  /**
   * A plain socket to a port on 127.0.0.1, optionally from a chosen loopback address (for limits per
   * client address), reading with a 10 s timeout.
   *
   * @param port the port
   * @param from the local address to bind, or null for any
   * @return the connected socket
   */
  public static Socket loopback(int port, String from) throws IOException {
    Socket s = new Socket();
    if (from != null) {
      s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
    }
    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    s.setSoTimeout(10_000);
    return s;
  }

  /** Sets how long a {@link #receive} waits before it throws {@link java.net.SocketTimeoutException} (30 s). */
  public void timeout(int ms) throws IOException {
    socket.setSoTimeout(ms);
  }

  /** Sends one frame holding the encoded object. */
  public void send(Object frame) throws IOException {
    sendRaw(codec.encode(frame));
  }

  /** Sends one frame with arbitrary content. */
  public void sendRaw(byte[] body) throws IOException {
    out.writeInt(body.length);
    out.write(body);
    out.flush();
  }

  /**
   * Sends a multicast request frame as a client would, with any id: for tests of what a node
   * accepts from whom (modules other than eyrie-multicast cannot name its internal frames).
   *
   * @param id the message's id
   * @param dests the destinations, ascending
   * @param replyGroup the destination that answers
   * @param payload the payload, encoded
   * @param watermark the client's watermark
   */
  public void sendMulticast(MsgId id, GroupId[] dests, GroupId replyGroup, byte[] payload, long watermark)
      throws IOException {
    send(new Wire.ClientRequest(1, new Wire.Start(id, dests, replyGroup, payload, watermark)));
  }

  /**
   * Sends, as a query to group {@code to}, a component of message {@code id} that claims to come
   * from group {@code from} with local timestamp {@code lts}: what one node's exchange pushes to
   * another's (design 4.3.1), for tests of who may send it.
   */
  public void sendComponent(GroupId to, MsgId id, GroupId from, long lts) throws IOException {
    Wire.Component c = new Wire.Component(id, from, lts, 0, null);
    send(new Wire.QueryRequest(1, to, codec.encode(new Wire.Components(to, new Wire.Component[] {c}))));
  }

  /** Sends, as a query to group {@code g}, the reply gate's question whether message {@code id} started there. */
  public void sendStartedQuery(GroupId g, MsgId id) throws IOException {
    send(new Wire.QueryRequest(1, g, codec.encode(new Wire.StartedQuery(new MsgId[] {id}))));
  }

  /**
   * The status of a reply frame {@link #receive} returned, or null if it is not one.
   *
   * @param reply a received frame
   * @return its status, or null
   */
  public static Status status(Object reply) {
    return reply instanceof Wire.ClientReply r ? r.status() : null;
  }

  /**
   * The error message of a reply frame {@link #receive} returned, or null.
   *
   * @param reply a received frame
   * @return its error, or null
   */
  public static String error(Object reply) {
    return reply instanceof Wire.ClientReply r ? r.error() : null;
  }

  /** Sends bytes as they are (no length prefix). */
  public void sendBytes(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /** Reads one frame and decodes it; returns null if the node closed the connection. */
  public Object receive() throws IOException {
    int len;
    try {
      len = in.readInt();
    } catch (EOFException e) {
      return null;
    }
    byte[] b = new byte[len];
    in.readFully(b);
    return codec.decode(b);
  }

  /**
   * What a node answers to input it rejects: its reply (after which it should close), or null if
   * it closed or reset the connection at once.
   *
   * @return the reply, or null
   */
  public Object receiveOrReset() {
    try {
      return receive();
    } catch (IOException e) {
      return null;
    }
  }

  /** Returns true if the peer has closed the connection (reads to end of stream). */
  public boolean closedByPeer() {
    return closedByPeer(socket);
  }

  /**
   * True if the server on {@code s} speaks HTTP/2: sent a client connection preface and an empty
   * SETTINGS frame, it answers with a SETTINGS frame (9-byte header, type 4). Ratis's Netty RPC
   * answers nothing to it, and a TLS port closes a plaintext one.
   */
  public static boolean answersHttp2Settings(Socket s) {
    try {
      s.setSoTimeout(5000);
      s.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});
      s.getOutputStream().flush();
      byte[] header = s.getInputStream().readNBytes(9);
      return header.length == 9 && header[3] == 4;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * True if the peer closes the socket within its read timeout (what it sent is skipped); a
   * reset counts as closed.
   *
   * @param s a connected socket
   * @return whether the peer closed it
   */
  public static boolean closedByPeer(Socket s) {
    try {
      InputStream in = s.getInputStream();
      while (in.read() >= 0) {
        // skip
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

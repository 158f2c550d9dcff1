package io.eyrie.multicast;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Locale;
import java.util.Objects;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;

/**
 * Who is at the other end of a mutual-TLS connection, as its certificate says: a name and a role.
 *
 * <p>An Eyrie certificate (as {@code eyrie certs} writes them) carries the name in its subject's
 * common name ({@code CN}) and the role in its subject's organizational unit ({@code OU}), for
 * example {@code CN=node-1, OU=node, O=Eyrie} or {@code CN=app, OU=client, O=Eyrie}. A
 * certificate with no {@code OU} naming a role, or with two, has no identity: it is refused.
 *
 * @param name the subject's common name: 1 to 64 characters from {@code [A-Za-z0-9._-]}
 * @param role what the holder may do
 */
public record Identity(String name, Role role) {

  /** What the holder of a certificate may do. */
  public enum Role {
    /** A node of the cluster: Raft, channels, relays and proposals. */
    NODE,
    /** An operator: partition changes, audits, status. */
    ADMIN,
    /** An application: commands only. */
    CLIENT;

    /**
     * Returns the role's name as a certificate carries it: {@code node}, {@code admin} or
     * {@code client}.
     *
     * @return the lower-case name
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Returns true if a holder of this role may send what needs {@code needed}: a node may do
     * everything, an admin what an admin or a client may, a client only what a client may.
     *
     * @param needed the role a request needs; null stands for {@link #CLIENT}
     * @return whether this role is enough
     */
    public boolean covers(Role needed) {
      Role n = needed == null ? CLIENT : needed;
      return switch (this) {
        case NODE -> true;
        case ADMIN -> n != NODE;
        case CLIENT -> n == CLIENT;
      };
    }

    /**
     * Returns the role a certificate's {@code OU} names, or {@code null} if it names none.
     *
     * @param label {@code node}, {@code admin} or {@code client} (any case)
     * @return the role, or {@code null}
     */
    public static Role ofLabel(String label) {
      for (Role r : values()) {
        if (r.label().equalsIgnoreCase(label)) {
          return r;
        }
      }
      return null;
    }
  }

  /** Validates the name and the role. */
  public Identity {
    Objects.requireNonNull(role, "role");
    if (!validName(name)) {
      throw new IllegalArgumentException("invalid identity name: '" + name
          + "' (1 to 64 characters from A-Z a-z 0-9 . _ -)");
    }
  }

  /**
   * Returns true if {@code name} can name an identity: 1 to 64 characters from
   * {@code [A-Za-z0-9._-]}.
   *
   * @param name a candidate name
   * @return whether it is valid
   */
  public static boolean validName(String name) {
    if (name == null || name.isEmpty() || name.length() > 64) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
          || c == '-')) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads the identity from a certificate's subject ({@code CN} the name, {@code OU} the role).
   *
   * @param certificate the certificate
   * @return its identity
   * @throws IllegalArgumentException if the subject has no single valid name and role
   */
  public static Identity of(X509Certificate certificate) {
    String subject = certificate.getSubjectX500Principal().getName(X500Principal.RFC2253);
    String cn = null;
    Role role = null;
    int cns = 0;
    int roles = 0;
    try {
      for (Rdn rdn : new LdapName(subject).getRdns()) {
        String type = rdn.getType();
        String value = String.valueOf(rdn.getValue());
        if (type.equalsIgnoreCase("CN")) {
          cn = value;
          cns++;
        } else if (type.equalsIgnoreCase("OU") && Role.ofLabel(value) != null) {
          role = Role.ofLabel(value);
          roles++;
        }
      }
    } catch (InvalidNameException e) {
      throw new IllegalArgumentException("unreadable certificate subject '" + subject + "'", e);
    }
    if (roles != 1) {
      throw new IllegalArgumentException("certificate '" + subject
          + "' has no single role in its OU (one of node, admin, client)");
    }
    if (cns != 1 || !validName(cn)) {
      throw new IllegalArgumentException("certificate '" + subject + "' has no single valid CN to name an identity");
    }
    return new Identity(cn, role);
  }

  /**
   * Reads the identity from a certificate chain, the peer's first ({@link
   * SSLSession#getPeerCertificates()}).
   *
   * @param chain the chain, the holder's certificate first
   * @return the identity of the first certificate
   * @throws IllegalArgumentException if the chain is empty, not X.509, or has no identity
   */
  public static Identity of(Certificate[] chain) {
    if (chain == null || chain.length == 0 || !(chain[0] instanceof X509Certificate x)) {
      throw new IllegalArgumentException("no X.509 certificate in the chain");
    }
    return of(x);
  }

  /**
   * Reads the identity of the peer of a TLS session whose handshake is done.
   *
   * @param session the session
   * @return the peer's identity
   * @throws SSLPeerUnverifiedException if the peer presented no certificate
   * @throws IllegalArgumentException if its certificate names no identity
   */
  public static Identity ofPeer(SSLSession session) throws SSLPeerUnverifiedException {
    return of(session.getPeerCertificates());
  }

  /**
   * Returns the top 32 bits of every client id ({@link MsgId#client()}) this identity may send
   * under with mutual TLS: the first 4 bytes, big-endian, of the SHA-256 of {@code role:name} in
   * UTF-8 (for example of {@code client:app}). A {@link MulticastClient} with TLS takes them as
   * its incarnation id's top bits and picks the low 32 bits at random; a node refuses a multicast
   * from a {@code client} or {@code admin} peer whose id has other top bits, so that nobody can
   * resend, supersede or expire another identity's commands. Nothing is stored: every node
   * computes the tag from the peer's certificate.
   *
   * @return the tag
   */
  public int clientIdTag() {
    try {
      byte[] h = java.security.MessageDigest.getInstance("SHA-256")
          .digest((role.label() + ":" + name).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.nio.ByteBuffer.wrap(h).getInt();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /**
   * Returns true if this identity may send messages under the client id: a node under any id
   * (nodes already replicate every client's messages), any other role under the ids whose top 32
   * bits are its {@link #clientIdTag()}.
   *
   * @param clientId a client incarnation id
   * @return whether this identity may use it
   */
  public boolean mayUseClientId(long clientId) {
    return role == Role.NODE || (int) (clientId >>> 32) == clientIdTag();
  }

  /** Returns {@code name (role)}, for example {@code app (client)}. */
  @Override
  public String toString() {
    return name + " (" + role.label() + ")";
  }
}

/**
 * Internal use only: how bytes reach a node. The client endpoint ({@code ClientEndpoint}, the
 * parts of its connections' pipeline {@code ConnectionAdmission}, {@code TlsGate} and {@code
 * RequestDispatcher}, counting in {@code EndpointCounters}, its frames {@code FrameCodec} and the
 * {@code RequestHandler} it calls), and Ratis's server and client over Netty ({@code
 * RatisSupport}, {@code EyrieNettyRpc}).
 *
 * <p>May use {@code io.eyrie.multicast.internal} (the wire types) and the API package's types
 * (the reply {@code Status} among them); not {@code internal.state} nor {@code
 * internal.replication}.
 */
package io.eyrie.multicast.internal.transport;

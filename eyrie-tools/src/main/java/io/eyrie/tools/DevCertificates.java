package io.eyrie.tools;

import io.eyrie.multicast.Identity;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a development CA and a cluster's certificates into a directory, as {@code eyrie certs
 * --out DIR --nodes ... --admin ... --client ...} does (the same code), for programs that run a
 * cluster with TLS on their own: {@code chirper demo --tls}, the Jepsen harness's {@code --tls}.
 * The node certificates name {@code localhost}, {@code 127.0.0.1} and the hosts given. Read them back with {@code
 * TlsConfig.fromDir(dir, "node-1")}, {@code "admin-NAME"} or {@code "client-NAME"}.
 */
public final class DevCertificates {
  private DevCertificates() {}

  /**
   * Writes a new CA and the certificates, valid for a year, into {@code dir} (made if missing).
   *
   * @param dir the directory; it must hold no CA yet
   * @param nodes the node ids (certificates {@code node-ID})
   * @param hosts more DNS names or IP addresses for the node certificates (the nodes' addresses
   *     in the cluster file, if not loopback)
   * @param admins the admin names (certificates {@code admin-NAME})
   * @param clients the client names (certificates {@code client-NAME})
   * @return the files written
   * @throws IOException if the directory holds a CA already, or a file cannot be written
   * @throws GeneralSecurityException if a key cannot be made or a certificate signed
   */
  public static List<Path> write(Path dir, List<String> nodes, List<String> hosts, List<String> admins,
      List<String> clients) throws IOException, GeneralSecurityException {
    List<Certs.Request> requests = new ArrayList<>();
    nodes.forEach(n -> requests.add(Certs.Request.node(n)));
    admins.forEach(n -> requests.add(new Certs.Request(Identity.Role.ADMIN, n)));
    clients.forEach(n -> requests.add(new Certs.Request(Identity.Role.CLIENT, n)));
    try {
      return Certs.write(new Certs.Plan(dir, requests, hosts, 365, false, false, Instant.now()));
    } catch (IllegalArgumentException e) {
      throw new IOException("cannot write certificates into " + dir + ": " + e.getMessage(), e);
    } catch (Certs.RefusedException e) {
      throw new IOException("cannot write certificates into " + dir + ": " + e.getMessage(), e);
    }
  }
}

package io.eyrie.tools;

import io.eyrie.multicast.Identity;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code eyrie certs}: a development CA and the certificates of a first cluster ({@link Certs}). */
final class CertsCommand implements Command {

  @Override
  public String name() {
    return "certs";
  }

  @Override
  public String summary() {
    return "writes a development CA and certificates for mutual TLS";
  }

  @Override
  public String usage() {
    return """
        usage: eyrie certs --out DIR [--nodes 1,2,3] [--admin ops] [--client app] [--hosts H1,H2]
                           [--days 365] [--new-ca] [--force]

          --out DIR        the directory to write into (made if missing)
          --nodes IDS      node ids: node-ID.pem and node-ID-key.pem for each
          --admin NAMES    admin identities: admin-NAME.pem and admin-NAME-key.pem for each
          --client NAMES   client identities: client-NAME.pem and client-NAME-key.pem for each
          --hosts H1,H2    DNS names or IP addresses the node certificates also name, besides
                           localhost and 127.0.0.1 (every host a node is dialled at)
          --days N         how long the certificates are valid (default 365)
          --new-ca         make a new CA even if DIR has one (needs --force then)
          --force          replace existing files

        DIR gets a development CA (ca.pem, ca-key.pem) unless it has one already: then the CA
        there signs the new identities, so a client can be added later with
        `eyrie certs --out DIR --client NAME`. An existing CA is never replaced without
        --new-ca --force, nor an identity's files without --force.

        A certificate's subject is CN=NAME, OU=ROLE, O=Eyrie: the common name is the identity
        (node-1, ops, app) and the OU its role (node, admin or client). Node certificates may
        serve and dial (serverAuth, clientAuth); admin and client ones may only dial (clientAuth).
        Keys are EC P-256, unencrypted PKCS#8 PEM, readable by their owner only: keep ca-key.pem
        off the nodes. A development CA: for production, use your organisation's CA.""";
  }

  @Override
  public Set<String> valued() {
    return Set.of("out", "nodes", "admin", "client", "hosts", "days");
  }

  @Override
  public Set<String> switches() {
    return Set.of("new-ca", "force");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    return run(a, out, err, Instant.now());
  }

  /**
   * Runs the command with the certificates' validity starting at {@code start} (less {@link
   * Certs#SKEW}): now from the command line, in the past for tests of expired certificates.
   */
  int run(Args a, PrintStream out, PrintStream err, Instant start) throws Exception {
    a.noPositional();
    Path dir = Path.of(a.required("out"));
    List<Certs.Request> requests = new ArrayList<>();
    try {
      for (String id : list(a, "nodes")) {
        requests.add(Certs.Request.node(id));
      }
      for (String n : list(a, "admin")) {
        requests.add(new Certs.Request(Identity.Role.ADMIN, n));
      }
      for (String n : list(a, "client")) {
        requests.add(new Certs.Request(Identity.Role.CLIENT, n));
      }
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    int days = a.integer("days", 365, 1, 36_500);
    Certs.Plan plan;
    try {
      plan = new Certs.Plan(dir, requests, list(a, "hosts"), days, a.flag("new-ca"), a.flag("force"), start);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    List<Path> written;
    try {
      written = Certs.write(plan);
    } catch (Certs.RefusedException e) {
      err.println("eyrie certs: refused: " + e.getMessage());
      return 1;
    }
    boolean newCa = written.contains(dir.resolve(Certs.CA_FILE));
    out.println((newCa ? "a new development CA in " : "the CA of ") + dir + " signed " + requests.size()
        + " certificate(s), valid for " + days + " days:");
    for (Path f : written) {
      out.println("  " + f);
    }
    out.println("Each process needs ca.pem and its own NAME.pem and NAME-key.pem; keep ca-key.pem off the nodes.");
    return 0;
  }

  private static List<String> list(Args a, String option) throws Args.UsageException {
    List<String> items = new ArrayList<>();
    if (!a.has(option)) {
      return items;
    }
    for (String s : a.string(option, "").split(",")) {
      String t = s.trim();
      if (t.isEmpty()) {
        throw new Args.UsageException("option --" + option + " has an empty item: '" + a.string(option, "") + "'");
      }
      items.add(t);
    }
    return items;
  }
}

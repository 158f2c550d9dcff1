package io.eyrie.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.examples.bank.BankOps;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A workload with locality (objects accessed in stable groups, initially spread over all 4
 * partitions): after a warm-up, at least 95% of commands execute in one partition without a
 * retry or a move.
 */
@Timeout(300)
class ConvergenceTest {

  @Test
  void objectsUsedTogetherEndUpTogether() throws Exception {
    long seed = DssmrFixture.seed("ConvergenceTest");
    int groups = 10;
    int perGroup = 4;
    try (EmbeddedCluster c = DssmrFixture.bank(4)) {
      List<Client> clients = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        clients.add(DssmrFixture.client(c, Client.Mode.DSSMR, 3));
      }
      for (int i = 0; i < groups * perGroup; i++) {
        assertTrue(clients.get(0).sendCreate(Command.create(ObjId.valueOf(i), 100L)).get(60, TimeUnit.SECONDS).isOk());
      }
      Random rnd = new Random(seed);
      run(clients, rnd, groups, perGroup, 300);
      List<ClientStats> before = clients.stream().map(Client::stats).toList();
      run(clients, rnd, groups, perGroup, 300);
      long commands = 0;
      long direct = 0;
      for (int i = 0; i < clients.size(); i++) {
        commands += clients.get(i).stats().commands() - before.get(i).commands();
        direct += clients.get(i).stats().direct() - before.get(i).direct();
      }
      double share = (double) direct / commands;
      System.out.printf("after warm-up: %d of %d commands (%.1f%%) single-partition without retry or move%n",
          direct, commands, 100 * share);
      for (Client cl : clients) {
        System.out.println("  " + cl.stats());
        cl.close();
      }
      assertTrue(share >= 0.95, "share of single-partition commands " + share);
    }
  }

  private static void run(List<Client> clients, Random rnd, int groups, int perGroup, int perClient)
      throws Exception {
    List<java.util.concurrent.CompletableFuture<?>> all = new ArrayList<>();
    for (int n = 0; n < perClient; n++) {
      for (Client cl : clients) {
        int g = rnd.nextInt(groups);
        long a = g * perGroup + rnd.nextInt(perGroup);
        long b = g * perGroup + (a - g * perGroup + 1 + rnd.nextInt(perGroup - 1)) % perGroup;
        all.add(cl.sendAccess(Command.access(new BankOps.Read(), ObjId.valueOf(a), ObjId.valueOf(b)))
            .thenAccept(r -> {
              if (!r.isOk()) {
                throw new AssertionError("read failed: " + r);
              }
            }));
      }
      if (all.size() >= 12) {
        for (var f : all) {
          f.get(120, TimeUnit.SECONDS);
        }
        all.clear();
      }
    }
    for (var f : all) {
      f.get(120, TimeUnit.SECONDS);
    }
  }
}

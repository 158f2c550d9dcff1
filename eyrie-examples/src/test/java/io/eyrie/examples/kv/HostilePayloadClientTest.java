package io.eyrie.examples.kv;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.DefaultSerializer;
import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.Service;
import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.EmbeddedCluster;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A create whose value declares a huge array in a few bytes (issue 26 item 0; like chirper's
 * {@code SeedUser} with 2^29 followers) fails at once with an error naming the malformed
 * payload, instead of the client waiting for its total timeout with the outcome unknown.
 */
@Timeout(120)
class HostilePayloadClientTest {
  private static final int SEED_ID = 500;

  /** What the nodes know under {@link #SEED_ID}. */
  record Seed(long[] followers) {}

  /**
   * What the client sends under {@link #SEED_ID}: a Seed declaring {@link #count} followers.
   * Kryo finds its writer through the annotation when the client's service registers the class.
   */
  @DefaultSerializer(HostileSeedWriter.class)
  static final class HostileSeed {
    static volatile long count;
  }

  /** Public, with a public constructor: Kryo creates it. */
  public static final class HostileSeedWriter extends Serializer<HostileSeed> {
    @Override
    public void write(Kryo kryo, Output output, HostileSeed object) {
      output.writeVarInt((int) (HostileSeed.count + 1), true); // the long[]'s length + 1
      output.writeVarLong(42, true); // one follower
    }

    @Override
    public HostileSeed read(Kryo kryo, Input input, Class<? extends HostileSeed> type) {
      throw new UnsupportedOperationException("only sent");
    }
  }

  @Test
  void aCreateWithAHostileDeclaredSizeFailsAtOnce() throws Exception {
    // The nodes know a Seed under SEED_ID; the client, a service that disagrees, a HostileSeed.
    Service nodes = new KvService().get().toBuilder().type(SEED_ID, Seed.class).build();
    Service hostile = new KvService().get().toBuilder().type(SEED_ID, HostileSeed.class).build();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(nodes).start()) {
      for (long count : new long[] {1L << 29, (1L << 31) - 2}) {
        HostileSeed.count = count;
        try (Client client = Client.newBuilder().cluster(cluster.cluster()).service(hostile).build()) {
          long start = System.nanoTime();
          ExecutionException e = assertThrows(ExecutionException.class,
              () -> client.sendCreate(Command.create(ObjId.valueOf(7), new HostileSeed())).get(60, SECONDS));
          long millis = (System.nanoTime() - start) / 1_000_000;
          Throwable cause = e.getCause();
          assertTrue(!(cause instanceof CallTimeoutException), "a clear error, not an unknown outcome: " + cause);
          assertTrue(String.valueOf(cause.getMessage()).contains("malformed"), "names the malformed payload: " + cause);
          assertTrue(millis < 5_000, "fails at once, not after the total timeout: " + millis + " ms");
          // The client and the cluster keep working.
          Reply r = client.sendCreate(Command.create(ObjId.valueOf(8 + count), "x")).get(30, SECONDS);
          assertEquals(Reply.Status.OK, r.status(), String.valueOf(r));
        }
      }
    }
  }
}

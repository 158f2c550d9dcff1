package io.eyrie.examples.kv;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.LocalService;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.Service;
import io.eyrie.multicast.EmbeddedCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's "Write a service" walkthrough, run: the key-value service on an embedded
 * cluster, called through the client. {@code ReadmeSnippetsTest} checks that the README quotes
 * this code and the example's sources verbatim.
 */
@Timeout(180)
class WriteAServiceTest {

  @Test
  void walkthrough() throws Exception {
    Service kv = new KvService().get();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(kv).start();
        Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv).build()) {
      ObjId apple = ObjId.valueOf(1);
      ObjId pear = ObjId.valueOf(2);
      client.sendCreate(Command.create(apple, "red")).get(30, SECONDS);
      client.sendCreate(Command.create(pear, "green")).get(30, SECONDS);

      Reply put = client.sendAccess(Command.access(new KvOps.Put("yellow"), pear)).get(30, SECONDS);
      Reply copy = client.sendAccess(Command.access(new KvOps.Copy(1, 2), apple, pear)).get(30, SECONDS);
      Reply again = client.sendCreate(Command.create(apple, "blue")).get(30, SECONDS);
      client.sendDelete(Command.delete(apple, null)).get(30, SECONDS);
      Reply gone = client.sendRead(Command.access(new KvOps.Get(), apple)).get(30, SECONDS);

      switch (gone.status()) {
        case OK -> System.out.println("value: " + gone.value());
        case NOT_FOUND -> System.out.println("no key " + gone.object());
        case EXISTS -> System.out.println("key " + gone.object() + " exists already");
        case REFUSED -> System.out.println("refused: " + gone.reason());
      }

      assertEquals("green", put.value(), "a put replies the previous value");
      assertEquals("red", copy.value(), "the copy gathered both keys in one partition");
      assertEquals(Reply.Status.EXISTS, again.status());
      assertEquals(apple, again.object());
      assertEquals(Reply.Status.NOT_FOUND, gone.status());
      assertEquals(apple, gone.object(), "the reply names the missing key");
      Reply deleteAgain = client.sendDelete(Command.delete(apple, null)).get(30, SECONDS);
      assertEquals(Reply.Status.NOT_FOUND, deleteAgain.status(), "deleting an absent key says so");
      assertEquals(apple, deleteAgain.object());
      assertNull(deleteAgain.value());
      Reply read = client.sendAccess(Command.access(new KvOps.Get(), pear)).get(30, SECONDS);
      assertEquals("red", read.value());
    }
  }

  @Test
  void withoutACluster() {
    LocalService kv = LocalService.of(new KvService().get());
    ObjId apple = ObjId.valueOf(1);
    kv.create(Command.create(apple, "red"));
    Reply put = kv.access(Command.access(new KvOps.Put("green"), apple));
    kv.restart(); // through a snapshot and back, as a replica that restarts
    Reply get = kv.access(Command.access(new KvOps.Get(), apple));

    assertEquals("red", put.value());
    assertEquals("green", get.value());
  }
}

package io.eyrie.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.multicast.Identity;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Without TLS there is no identity: {@link Service#requiredRole} does not ask the authorizer
 * (there is no peer to ask about), and the authorizer survives {@link Service#toBuilder()}. The
 * hook over real TLS is tested in eyrie-tools' {@code ServiceAuthorizerTest}.
 */
@Timeout(30)
class ServiceAuthorizerWithoutTlsTest {

  @Test
  void withoutAPeerTheHookIsNotAskedAndTheRolesStay() {
    AtomicInteger asked = new AtomicInteger();
    Service.Authorizer hook = (peer, cmd) -> {
      asked.incrementAndGet();
      return Service.Authorizer.Decision.deny("never");
    };
    Service s = Service.newBuilder().server(() -> null).oracle(() -> null).authorizer(hook).build();
    assertNull(s.requiredRole(new AccessReq(Command.access("op", ObjId.valueOf(1)))));
    assertEquals(Identity.Role.ADMIN, s.toBuilder().build().requiredRole(new PartitionChange(null, false)));
    assertNull(s.toBuilder().build().requiredRole(new AccessReq(Command.access("op", ObjId.valueOf(1)))));
    assertEquals(0, asked.get(), "no peer, no question");
  }

  @Test
  void aDenialNeedsAReason() {
    assertSame(Service.Authorizer.Decision.allow(), Service.Authorizer.Decision.allow());
    org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
        () -> Service.Authorizer.Decision.deny(null));
  }
}

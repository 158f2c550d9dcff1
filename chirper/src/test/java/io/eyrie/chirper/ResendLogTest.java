package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastClient.ResendListener.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class ResendLogTest {

  @Test
  void eachResendIsALineWithItsNodeAttemptsAndReason(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("resends.txt");
    try (ResendLog log = new ResendLog(file)) {
      log.attemptFailed(new MsgId(7, 3, 0), 2, 1, Reason.ATTEMPT_TIMEOUT);
      log.attemptFailed(null, 1, 2, Reason.CONNECTION);
    }
    List<String> lines = Files.readAllLines(file);
    assertEquals(2, lines.size(), lines.toString());
    String[] first = lines.get(0).split(" ");
    assertEquals(5, first.length, lines.get(0));
    assertEquals(new MsgId(7, 3, 0).toString(), first[1]);
    assertEquals(List.of("2", "1", "attempt_timeout"), List.of(first[2], first[3], first[4]));
    assertTrue(lines.get(1).endsWith(" query 1 2 connection"), lines.get(1));
  }
}

package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Node#prepareJvm()} on a 2-core JVM: without it, every async {@code CompletableFuture}
 * task without an executor starts a thread (the JDK sizes the common pool at cores - 1 and does
 * not use a pool of 1), which Ratis does for every appendEntries a follower takes. Each case runs
 * in a fresh JVM told it has 2 processors, since the JDK reads the setting once per JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PrepareJvmTest {

  /** Prints the name of the thread that runs an async task, after preparing the JVM if asked. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("prepare")) {
      System.out.println("pooled=" + Node.prepareJvm());
    }
    System.out.println("thread=" + CompletableFuture.supplyAsync(() -> Thread.currentThread().getName()).get());
  }

  @Test
  void asyncTasksRunOnTheCommonPoolOnceTheJvmIsPrepared() throws Exception {
    String out = run(List.of("prepare"));
    assertTrue(out.contains("pooled=true"), out);
    assertTrue(out.contains("thread=ForkJoinPool.commonPool"), out);
  }

  @Test
  void withoutItATwoCoreJvmStartsAThreadPerAsyncTask() throws Exception {
    // The behaviour prepareJvm exists for: if the JDK stops doing this, the setting can go.
    String out = run(List.of());
    assertTrue(out.contains("thread=Thread-"), out);
  }

  @Test
  void aParallelismTheUserSetIsKept() throws Exception {
    String out = run(List.of("prepare"), "-Djava.util.concurrent.ForkJoinPool.common.parallelism=1");
    assertTrue(out.contains("pooled=false"), out);
    assertTrue(out.contains("common pool parallelism 1"), out);
  }

  private static String run(List<String> args, String... jvmFlags) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:ActiveProcessorCount=2");
    cmd.addAll(List.of(jvmFlags));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(PrepareJvmTest.class.getName());
    cmd.addAll(args);
    Path log = java.nio.file.Files.createTempFile("prepare-jvm", ".txt");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the probe JVM did not exit");
      String out = java.nio.file.Files.readString(log, StandardCharsets.UTF_8);
      assertEquals(0, p.exitValue(), out);
      return out;
    } finally {
      p.destroyForcibly();
      java.nio.file.Files.deleteIfExists(log);
    }
  }
}

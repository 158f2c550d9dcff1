package io.eyrie.bench;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.Service;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.oracle.OracleStateMachine;
import java.util.ArrayList;
import java.util.List;

/** Benchmark-local application types, registered at ids 100 and up. */
final class BenchTypes {
  private BenchTypes() {}

  /** A small operation, like a bank transfer's. */
  record Op(String name, long amount) {}

  /** A bank-account-like object: one id and a balance. */
  static final class Account extends PRObject {
    long balance;

    Account() {}

    Account(ObjId id, long balance) {
      super(id);
      this.balance = balance;
    }
  }

  /** A timeline post, as a Chirper-like user stores it. */
  record Post(long author, long time, String text) {}

  /** A Chirper-like user: followers, follows and a timeline. */
  static final class User extends PRObject {
    ArrayList<Long> followers = new ArrayList<>();
    ArrayList<Long> follows = new ArrayList<>();
    ArrayList<Post> timeline = new ArrayList<>();

    User() {}

    User(ObjId id) {
      super(id);
    }
  }

  /**
   * The benchmark's types as a service. The micro benchmarks use only its codec: its partition
   * server and oracle never run.
   */
  private static final Service SERVICE = Service.newBuilder()
      .type(100, Op.class)
      .type(101, Account.class)
      .type(102, Post.class)
      .type(103, User.class)
      .type(104, Long.class)
      .server(() -> null)
      .oracle(OracleStateMachine::new)
      .build();

  /** Returns core's registrations plus the benchmark's. */
  static CodecRegistry registry() {
    return SERVICE.registry();
  }

  /** Returns a user with {@code posts} timeline entries of about 60 characters each. */
  static User user(long id, int posts) {
    User u = new User(ObjId.valueOf(id));
    for (long i = 0; i < 20; i++) {
      u.followers.add(id + i + 1);
      u.follows.add(id + i + 100);
    }
    for (int i = 0; i < posts; i++) {
      u.timeline.add(new Post(id + i % 20, 1_700_000_000_000L + i, "chirp number " + i + ": a short message of some sixty chars"));
    }
    return u;
  }

  /** Returns ids 1..n. */
  static List<ObjId> ids(int n) {
    List<ObjId> l = new ArrayList<>();
    for (long i = 1; i <= n; i++) {
      l.add(ObjId.valueOf(i * 7919));
    }
    return l;
  }
}

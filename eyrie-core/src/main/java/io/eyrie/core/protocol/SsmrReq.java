package io.eyrie.core.protocol;

import io.eyrie.core.Command;

/** Multicast to several partitions (and maybe the oracle): execute with S-SMR execution atomicity. */
public record SsmrReq(Command cmd) {}

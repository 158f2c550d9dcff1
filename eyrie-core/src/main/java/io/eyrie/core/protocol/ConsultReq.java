package io.eyrie.core.protocol;

import io.eyrie.core.Command;

/** Query to the oracle: where are the command's objects, or what is the outcome. */
public record ConsultReq(Command cmd) {}

package io.eyrie.chirper;

import io.eyrie.tools.Command;

/** One subcommand of {@link ChirperMain}: an Eyrie {@link Command}, parsed the same way as every other. */
interface Subcommand extends Command {}

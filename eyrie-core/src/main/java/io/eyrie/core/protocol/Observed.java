package io.eyrie.core.protocol;

import java.util.ArrayList;

/**
 * A partition's sampled accesses, or the oracle's input of them: each entry the objects of one
 * sampled command; {@code weight} is how many commands each sample stands for.
 */
public record Observed(ArrayList<long[]> accesses, double weight) {}

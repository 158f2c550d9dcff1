package io.eyrie.tools;

import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;

/**
 * A client proxy's counters ({@link Client#stats()}) as Micrometer meters: commands, moves,
 * retries, S-SMR fallbacks, multi-partition executions, oracle consults, commands that ran in
 * one partition at once, and the size of its location cache. Moves, retries and fallbacks are decided by the clients, so this is
 * where an application that embeds a {@link Client} exports them.
 *
 * <pre>{@code
 * new ClientMetrics(client, "frontend-1").bindTo(registry);
 * }</pre>
 */
final class ClientMetrics implements MeterBinder {
  private final Client client;
  private final Tags tags;

  /**
   * Creates the binder.
   *
   * @param client the client
   * @param name a name for this client (tag {@code client})
   */
  public ClientMetrics(Client client, String name) {
    this.client = client;
    this.tags = Tags.of("client", name);
  }

  @Override
  public void bindTo(MeterRegistry r) {
    counter(r, "eyrie.client.commands", "commands issued", ClientStats::commands);
    counter(r, "eyrie.client.moves", "move commands sent", ClientStats::moves);
    counter(r, "eyrie.client.moved.objects", "objects asked to move", ClientStats::movedObjects);
    counter(r, "eyrie.client.retries", "retry answers received", ClientStats::retries);
    counter(r, "eyrie.client.fallbacks", "commands executed with the S-SMR fallback", ClientStats::fallbacks);
    counter(r, "eyrie.client.multi.partition", "commands sent to several partitions at once",
        ClientStats::multiPartition);
    counter(r, "eyrie.client.consults", "consults of the oracle", ClientStats::consults);
    counter(r, "eyrie.client.direct", "commands that ran in one partition at the first attempt", ClientStats::direct);
    io.micrometer.core.instrument.Gauge.builder("eyrie.client.cached.locations", client, Client::cachedLocations)
        .description("object locations in the client's cache (bounded by Client.Builder.maxCachedLocations)")
        .tags(tags).register(r);
  }

  private void counter(MeterRegistry r, String name, String help, ToDoubleFunction<ClientStats> f) {
    FunctionCounter.builder(name, client, c -> f.applyAsDouble(c.stats())).description(help).tags(tags).register(r);
  }
}

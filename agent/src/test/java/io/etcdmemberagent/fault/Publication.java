package io.etcdmemberagent.fault;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;

/**
 * Where the agent under fault publishes its Pod's conditions and Events, and what it wrote there:
 * the real API server ({@link RealApiPublication}) or, for the faults a real server cannot give on
 * demand (5xx, 429 with Retry-After, a hang), the stand-in ({@link StandInPublication}).
 */
sealed interface Publication extends AutoCloseable permits RealApiPublication, StandInPublication {

  /** One successful status patch by the agent: when it arrived, our Pod's conditions around it. */
  record StatusWrite(long atNanos, JsonArray before, JsonArray after) {}

  /** The agent's flags to publish here (the Pod exists from now on). */
  List<String> agentFlags();

  /** The Pod's conditions as stored now. */
  JsonArray conditions();

  /** The agent's successful status patches, in order. */
  List<StatusWrite> agentPatches();

  /** The Pod's conditions after each of the agent's status patches. */
  default List<JsonArray> conditionHistory() {
    return agentPatches().stream().map(StatusWrite::after).toList();
  }

  /** The Events in the Pod's namespace. */
  List<JsonObject> events();

  /** Replaces the Pod by a new one of the same name (a new UID, none of our conditions). */
  void replacePod();

  /** Removes one condition from the Pod's status, as another writer would. */
  void removeCondition(String type);

  @Override
  void close();
}

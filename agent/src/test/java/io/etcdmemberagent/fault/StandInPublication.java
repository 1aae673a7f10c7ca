package io.etcdmemberagent.fault;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.etcdmemberagent.kube.FakeKubeApi;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The stand-in API ({@link FakeKubeApi}), for what a real server does not do on demand: answer 5xx,
 * 429 with Retry-After, or hang. Its semantics are checked against the real server by {@code
 * PodStatusDifferentialIT}.
 */
final class StandInPublication implements Publication {

  final FakeKubeApi api;
  private final List<String> flags;

  StandInPublication(FakeKubeApi api, Path dir) {
    this.api = api;
    api.createPod("default", FaultRig.POD);
    this.flags =
        List.of(
            "--kube=on",
            "--pod-name=" + FaultRig.POD,
            "--pod-namespace=default",
            "--kubeconfig=" + api.writeKubeconfig(dir));
  }

  @Override
  public List<String> agentFlags() {
    return flags;
  }

  @Override
  public JsonArray conditions() {
    return api.conditions("default", FaultRig.POD);
  }

  /** The stand-in's record of successful patches, with the arrival of each 200 PATCH of status. */
  @Override
  public List<StatusWrite> agentPatches() {
    List<FakeKubeApi.StatusPatch> patches = api.statusPatches();
    List<Long> times =
        api.requests().stream()
            .filter(r -> r.method().equals("PATCH") && r.path().endsWith("/status"))
            .filter(r -> r.status() == 200)
            .map(FakeKubeApi.Request::atNanos)
            .toList();
    List<StatusWrite> out = new ArrayList<>();
    for (int i = 0; i < patches.size(); i++) {
      long at = i < times.size() ? times.get(i) : Long.MAX_VALUE;
      out.add(new StatusWrite(at, patches.get(i).before(), patches.get(i).after()));
    }
    return out;
  }

  @Override
  public List<JsonObject> events() {
    return api.events();
  }

  @Override
  public void replacePod() {
    api.createPod("default", FaultRig.POD);
  }

  @Override
  public void removeCondition(String type) {
    api.removeCondition("default", FaultRig.POD, type);
  }

  @Override
  public void close() {
    api.close();
  }
}

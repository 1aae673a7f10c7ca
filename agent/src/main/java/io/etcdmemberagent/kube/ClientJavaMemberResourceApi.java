package io.etcdmemberagent.kube;

import static io.etcdmemberagent.kube.KubeJson.instant;
import static io.etcdmemberagent.kube.KubeJson.list;
import static io.etcdmemberagent.kube.KubeJson.map;
import static io.etcdmemberagent.kube.KubeJson.text;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.join.JoinRecord;
import io.etcdmemberagent.core.publish.ConditionEntry;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.MemberFacts;
import io.etcdmemberagent.core.publish.MemberFigures;
import io.etcdmemberagent.core.publish.MemberResourceApi;
import io.etcdmemberagent.core.publish.MemberRole;
import io.etcdmemberagent.core.publish.MemberStatusDocument;
import io.etcdmemberagent.core.publish.MemberTransition;
import io.etcdmemberagent.core.publish.PodApi.PodApiException;
import io.etcdmemberagent.support.Json;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link MemberResourceApi} on client-java's kubeconfig and credentials ({@link KubeClients}): the
 * EtcdMember custom resource ({@code etcdmembers.<prefix>/v1alpha1}) named after the Pod, created
 * with an empty spec and the Pod's controller as owner, its status written by JSON merge patch of
 * the status subresource.
 */
public final class ClientJavaMemberResourceApi implements MemberResourceApi {

  public static final String PLURAL = "etcdmembers";
  public static final String KIND = "EtcdMember";

  private final KubeHttp api;
  private final boolean ownsConnection;
  private final String group;
  private final String namespace;
  private final String name;

  private ClientJavaMemberResourceApi(
      KubeHttp api, boolean ownsConnection, String group, String namespace, String name) {
    this.api = api;
    this.ownsConnection = ownsConnection;
    this.group = group;
    this.namespace = namespace;
    this.name = name;
  }

  /**
   * On the Pod publisher's connection (one kubeconfig read, one TLS context, one connection pool
   * per agent); {@code group} is the condition prefix.
   */
  public static ClientJavaMemberResourceApi sharing(ClientJavaPodApi pods, String group) {
    return new ClientJavaMemberResourceApi(
        pods.http(), false, group, pods.namespace(), pods.podName());
  }

  /** On a connection of its own (the join command has no Pod publisher). */
  public static ClientJavaMemberResourceApi connect(
      Optional<Path> kubeconfig, String group, String namespace, String podName, Duration timeout)
      throws IOException {
    return new ClientJavaMemberResourceApi(
        KubeClients.connect(kubeconfig, timeout), true, group, namespace, podName);
  }

  public static final String VERSION = "v1alpha1";

  @Override
  public boolean served() throws PodApiException {
    try {
      return KubeJson.list(api.get("apis", group, VERSION).get("resources")).stream()
          .map(r -> KubeJson.map(r).get("name"))
          .anyMatch(PLURAL::equals);
    } catch (KubeCallException e) {
      if (e.code() == 404) {
        return false;
      }
      throw new PodApiException(ClientJavaPodApi.answer(e));
    }
  }

  @Override
  public Optional<MemberResourceView> read() throws PodApiException {
    Map<?, ?> root;
    try {
      root = api.get("apis", group, VERSION, "namespaces", namespace, PLURAL, name);
    } catch (KubeCallException e) {
      if (e.code() == 404) {
        return Optional.empty();
      }
      throw new PodApiException(ClientJavaPodApi.answer(e));
    }
    Map<?, ?> meta = map(root.get("metadata"));
    Map<?, ?> status = map(root.get("status"));
    List<MemberTransition> transitions = new ArrayList<>();
    for (Object o : list(status.get("transitions"))) {
      Map<?, ?> t = map(o);
      transitions.add(
          new MemberTransition(
              MemberRole.parse(text(t.get("role"))),
              text(t.get("reason")),
              text(t.get("message")),
              instant(t.get("transitionTime"))));
    }
    List<ConditionEntry> conditions = new ArrayList<>();
    for (Object o : list(status.get("conditions"))) {
      Map<?, ?> c = map(o);
      conditions.add(
          new ConditionEntry(
              text(c.get("type")),
              ConditionStatus.parse(text(c.get("status"))),
              text(c.get("reason")),
              text(c.get("message")),
              instant(c.get("lastTransitionTime"))));
    }
    return Optional.of(
        new MemberResourceView(
            text(meta.get("uid")),
            KubeJson.number(meta.get("generation")),
            transitions,
            conditions));
  }

  @Override
  public Optional<ResourceOwner> podOwner() throws PodApiException {
    try {
      Map<?, ?> pod = api.get("api", "v1", "namespaces", namespace, "pods", name);
      return list(map(pod.get("metadata")).get("ownerReferences")).stream()
          .map(KubeJson::map)
          .filter(r -> Boolean.TRUE.equals(r.get("controller")))
          .findFirst()
          .map(
              r ->
                  new ResourceOwner(
                      text(r.get("apiVersion")),
                      text(r.get("kind")),
                      text(r.get("name")),
                      text(r.get("uid"))));
    } catch (KubeCallException e) {
      throw new PodApiException(ClientJavaPodApi.answer(e));
    }
  }

  @Override
  public KubeAnswer create(Optional<ResourceOwner> owner) {
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", name);
    meta.put("namespace", namespace);
    meta.put("labels", Map.of("app.kubernetes.io/managed-by", "etcd-member-agent"));
    // Not the owner's controller, and no blockOwnerDeletion (which needs the owner's finalizers
    // permission): the garbage collector deletes the object after its StatefulSet.
    owner.ifPresent(
        o ->
            meta.put(
                "ownerReferences",
                List.of(
                    Map.of(
                        "apiVersion", o.apiVersion(),
                        "kind", o.kind(),
                        "name", o.name(),
                        "uid", o.uid()))));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("apiVersion", group + "/" + VERSION);
    body.put("kind", KIND);
    body.put("metadata", meta);
    body.put("spec", Map.of());
    try {
      api.send(
          "POST",
          KubeHttp.JSON,
          Json.write(body),
          "apis",
          group,
          VERSION,
          "namespaces",
          namespace,
          PLURAL);
      return new KubeAnswer.Done();
    } catch (KubeCallException e) {
      return ClientJavaPodApi.answer(e);
    }
  }

  @Override
  public KubeAnswer patchStatus(MemberStatusDocument status, long observedGeneration) {
    return mergeStatus(statusJson(status, observedGeneration));
  }

  @Override
  public KubeAnswer patchJoin(JoinRecord join) {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("decision", join.decision());
    j.put("message", clip(join.message(), 4096));
    j.put("memberID", join.memberId() == 0 ? null : Long.toHexString(join.memberId()));
    j.put("decidedAt", time(join.at()));
    j.put("waitedSeconds", join.waited().toSeconds());
    return mergeStatus(Map.of("join", j));
  }

  private KubeAnswer mergeStatus(Map<String, Object> status) {
    String body = Json.write(Map.of("status", status));
    try {
      api.send(
          "PATCH",
          KubeHttp.MERGE_PATCH,
          body,
          "apis",
          group,
          VERSION,
          "namespaces",
          namespace,
          PLURAL,
          name,
          "status");
      return new KubeAnswer.Done();
    } catch (KubeCallException e) {
      return ClientJavaPodApi.answer(e);
    }
  }

  /**
   * The status as the CRD's schema has it. Unknown values are written as null, which a merge patch
   * reads as "remove": the object never keeps a value this poll did not see.
   */
  static Map<String, Object> statusJson(MemberStatusDocument doc, long observedGeneration) {
    MemberFacts f = doc.facts();
    MemberFigures g = doc.figures();
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("memberID", hex(f.memberId()));
    s.put("clusterID", hex(f.clusterId()));
    s.put("name", f.name().isEmpty() ? null : f.name());
    s.put("peerURLs", f.peerUrls());
    s.put("clientURLs", f.clientUrls());
    s.put("role", f.role().text());
    s.put("ready", f.ready());
    s.put("learner", f.learner());
    s.put("started", f.started());
    s.put("leaderID", hex(f.leaderId()));
    s.put("raftTerm", f.raftTerm() == 0 ? null : f.raftTerm());
    s.put("lagEntries", g.lagEntries());
    s.put("dbSize", g.dbSizeBytes() == 0 ? null : g.dbSizeText());
    s.put("dbSizeBytes", g.dbSizeBytes() == 0 ? null : g.dbSizeBytes());
    s.put("dbSizeInUseBytes", g.dbSizeBytes() == 0 ? null : g.dbSizeInUseBytes());
    s.put("quotaBytes", g.quotaBytes() == 0 ? null : g.quotaBytes());
    s.put("quotaUsedPercent", g.quotaUsedPercent());
    Map<String, Object> tls = new LinkedHashMap<>();
    tls.put("enabled", f.peerTlsEnabled());
    tls.put("valid", f.peerTlsValid());
    tls.put("reason", f.peerTls());
    s.put("peerTLS", tls);
    s.put("disk", f.disk());
    s.put("alarms", f.alarms());
    s.put("etcdVersion", f.etcdVersion().isEmpty() ? null : f.etcdVersion());
    s.put("storageVersion", f.storageVersion().isEmpty() ? null : f.storageVersion());
    s.put("agentVersion", f.agentVersion());
    List<Map<String, Object>> conditions = new ArrayList<>();
    for (ConditionEntry e : doc.conditions()) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("type", e.name());
      c.put("status", e.status().text());
      c.put("reason", e.reason());
      c.put("message", clip(e.message(), 32768));
      c.put("lastTransitionTime", time(e.lastTransitionTime()));
      c.put("observedGeneration", observedGeneration);
      conditions.add(c);
    }
    s.put("conditions", conditions);
    List<Map<String, Object>> transitions = new ArrayList<>();
    for (MemberTransition t : doc.transitions()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("role", t.role().text());
      m.put("reason", t.reason());
      m.put("message", clip(t.message(), 1024));
      m.put("transitionTime", time(t.at()));
      transitions.add(m);
    }
    s.put("transitions", transitions);
    return s;
  }

  /** Within the schema's maxLength (a gRPC error can be long). */
  private static String clip(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }

  private static String hex(long id) {
    return id == 0 ? null : Long.toHexString(id);
  }

  private static String time(Instant at) {
    return at.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** A shared connection is closed by the Pod publisher. */
  @Override
  public void close() {
    if (ownsConnection) {
      api.close();
    }
  }
}

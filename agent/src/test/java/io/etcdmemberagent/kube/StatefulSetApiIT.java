package io.etcdmemberagent.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.SurplusPod;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubeRest;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale-down rule's Kubernetes calls against the real kube-apiserver: the owning StatefulSet's
 * replicas as they change, a Pod without one, a StatefulSet deleted, whether another Pod's agent
 * may still act (present, absent, past its deletion deadline), and an Event on the StatefulSet.
 */
class StatefulSetApiIT {

  static final String NS = "sts-api";

  @Test
  void readsTheOwnersReplicasAndOtherPodsAsTheApiServerHasThem() throws Exception {
    KubeControlPlane kube = KubeControlPlane.shared();
    kube.createNamespace(NS);
    KubeRest admin = kube.admin();
    // no controller-manager here makes the namespace's default ServiceAccount: Pods need one
    admin.postJson(
        "/api/v1/namespaces/" + NS + "/serviceaccounts",
        "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"default\"}}");
    JsonObject sts =
        admin.postJson(
            "/apis/apps/v1/namespaces/" + NS + "/statefulsets",
            """
            {"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},
             "spec":{"replicas":3,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
              "template":{"metadata":{"labels":{"app":"db"}},
               "spec":{"containers":[{"name":"etcd","image":"etcd"}]}}}}
            """);
    String uid = sts.getAsJsonObject("metadata").get("uid").getAsString();
    pod(admin, "db-1", uid, false);
    pod(admin, "db-4", uid, true);
    pod(admin, "db-3", uid, false, "node-a");
    pod(admin, "lonely", null, false);

    try (ClientJavaPodApi db1 = connect(kube, "db-1");
        ClientJavaPodApi lonely = connect(kube, "lonely")) {
      ClientJavaStatefulSetApi api = new ClientJavaStatefulSetApi(db1, Clock.systemUTC());
      assertThat(api.target()).isEqualTo(new ScaleTarget.Replicas("db", 3));
      admin.patch(
          "/apis/apps/v1/namespaces/" + NS + "/statefulsets/db",
          "application/merge-patch+json",
          "{\"spec\":{\"replicas\":2}}");
      assertThat(api.target()).isEqualTo(new ScaleTarget.Replicas("db", 2));
      assertThat(new ClientJavaStatefulSetApi(lonely, Clock.systemUTC()).target())
          .isInstanceOfSatisfying(
              ScaleTarget.None.class,
              n -> assertThat(n.reason()).contains("has no StatefulSet owner"));

      admin.patch(
          "/apis/apps/v1/namespaces/" + NS + "/statefulsets/db",
          "application/merge-patch+json",
          "{\"spec\":{\"ordinals\":{\"start\":1}}}");
      assertThat(api.target())
          .as("spec.ordinals.start")
          .isEqualTo(new ScaleTarget.Replicas("db", 2, 1));

      assertThat(api.pod("db-1")).as("present").isEqualTo(SurplusPod.RUNNING);
      assertThat(api.ownPod()).as("the agent's own Pod").isEqualTo(SurplusPod.RUNNING);
      assertThat(api.pod("db-9")).as("absent").isEqualTo(SurplusPod.GONE);
      admin.delete("/api/v1/namespaces/" + NS + "/pods/db-3?gracePeriodSeconds=300");
      assertThat(api.pod("db-3")).as("within its grace period").isEqualTo(SurplusPod.TERMINATING);
      admin.delete("/api/v1/namespaces/" + NS + "/pods/db-4?gracePeriodSeconds=0");
      assertThat(api.pod("db-4")).as("past its deletion deadline").isEqualTo(SurplusPod.GONE);

      assertThat(api.createEvent("db", PodEvent.normal("SurplusMemberRemoved", "test removal")))
          .isEqualTo(new KubeAnswer.Done());
      JsonObject events =
          admin.getJson(
              "/api/v1/namespaces/"
                  + NS
                  + "/events?fieldSelector=involvedObject.kind%3DStatefulSet,reason%3DSurplusMemberRemoved");
      JsonObject involved =
          events.getAsJsonArray("items").get(0).getAsJsonObject().getAsJsonObject("involvedObject");
      assertThat(involved.get("name").getAsString()).isEqualTo("db");
      assertThat(involved.get("uid").getAsString()).isEqualTo(uid);

      admin.delete("/apis/apps/v1/namespaces/" + NS + "/statefulsets/db?propagationPolicy=Orphan");
      assertThat(api.target())
          .isInstanceOfSatisfying(
              ScaleTarget.None.class,
              // without a garbage collector here the orphaning finalizer stays: "being deleted"
              n -> assertThat(n.reason()).containsAnyOf("gone", "being deleted"));
    } finally {
      admin.patch(
          "/api/v1/namespaces/" + NS + "/pods/db-4",
          "application/merge-patch+json",
          "{\"metadata\":{\"finalizers\":null}}");
    }
  }

  /**
   * At {@code helm uninstall} the agent's RoleBinding and ServiceAccount go while its Pods stop: a
   * 403 or 401 is read as the agent refused, which the fast path takes as final (not a doubt
   * retried for the whole budget); a 503 or a timeout stays a doubt.
   */
  @Test
  void anIdentityWhoseRightsOrAccountAreGoneIsRefused(@TempDir Path dir) throws Exception {
    KubeControlPlane kube = KubeControlPlane.shared();
    String ns = "sts-api-gone";
    kube.createNamespace(ns);
    KubeRest admin = kube.admin();
    for (String sa : List.of("default", "agent")) {
      admin.postJson(
          "/api/v1/namespaces/" + ns + "/serviceaccounts",
          "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\""
              + sa
              + "\"}}");
    }
    admin.postJson(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles",
        """
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"agent"},
         "rules":[{"apiGroups":["","apps"],"resources":["pods","statefulsets"],"verbs":["get"]}]}
        """);
    admin.postJson(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
        """
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"agent"},
         "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"agent"},
         "subjects":[{"kind":"ServiceAccount","name":"agent","namespace":"%s"}]}
        """
            .formatted(ns));
    JsonObject sts =
        admin.postJson(
            "/apis/apps/v1/namespaces/" + ns + "/statefulsets",
            """
            {"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},
             "spec":{"replicas":1,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
              "template":{"metadata":{"labels":{"app":"db"}},
               "spec":{"containers":[{"name":"etcd","image":"etcd"}]}}}}
            """);
    String uid = sts.getAsJsonObject("metadata").get("uid").getAsString();
    admin.postJson(
        "/api/v1/namespaces/" + ns + "/pods",
        ("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-1\","
                + "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
                + "\"name\":\"db\",\"uid\":\"%s\",\"controller\":true}]},"
                + "\"spec\":{\"containers\":[{\"name\":\"etcd\",\"image\":\"etcd\"}]}}")
            .formatted(uid));
    Path token =
        Files.writeString(
            dir.resolve("token"), kube.token(ns, "agent", Duration.ofMinutes(10), null));
    Path kubeconfig = kube.tokenKubeconfig(dir.resolve("kubeconfig"), kube.url(), token);
    try (ClientJavaPodApi pods =
        ClientJavaPodApi.connect(
            Optional.of(kubeconfig), ns, "db-1", "etcd-member-agent.io", Duration.ofSeconds(5))) {
      ClientJavaStatefulSetApi api = new ClientJavaStatefulSetApi(pods, Clock.systemUTC());
      assertThat(api.target()).isEqualTo(new ScaleTarget.Replicas("db", 1));

      admin.delete("/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings/agent");
      Poll.until(
          "the StatefulSet read refused (403)",
          Duration.ofSeconds(20),
          () -> !(api.target() instanceof ScaleTarget.Replicas));
      assertThat(api.target())
          .isInstanceOfSatisfying(
              ScaleTarget.Unread.class,
              u -> {
                assertThat(u.refused()).isTrue();
                assertThat(u.reason()).contains("403");
              });

      admin.delete("/api/v1/namespaces/" + ns + "/serviceaccounts/agent");
      Poll.until(
          "the token refused (401)",
          Duration.ofSeconds(20),
          () ->
              api.target() instanceof ScaleTarget.Unread u
                  && u.refused()
                  && u.reason().contains("401"));
    }
  }

  private static ClientJavaPodApi connect(KubeControlPlane kube, String pod) throws Exception {
    return ClientJavaPodApi.connect(
        Optional.of(kube.adminKubeconfig()),
        NS,
        pod,
        "etcd-member-agent.io",
        Duration.ofSeconds(5));
  }

  /** A Pod owned by the StatefulSet {@code uid} (or by nothing), held by a finalizer if asked. */
  private static void pod(KubeRest admin, String name, String ownerUid, boolean finalizer) {
    pod(admin, name, ownerUid, finalizer, null);
  }

  /**
   * {@code nodeName}: bound to a node (none runs here), so a graceful delete keeps it until its
   * grace period ends, as a kubelet stopping it would; an unbound Pod is deleted at once.
   */
  private static void pod(
      KubeRest admin, String name, String ownerUid, boolean finalizer, String nodeName) {
    String owner =
        ownerUid == null
            ? ""
            : ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
                + "\"name\":\"db\",\"uid\":\""
                + ownerUid
                + "\",\"controller\":true}]";
    String finalizers = finalizer ? ",\"finalizers\":[\"test.etcd-member-agent.io/hold\"]" : "";
    admin.postJson(
        "/api/v1/namespaces/" + NS + "/pods",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\""
            + name
            + "\""
            + owner
            + finalizers
            + "},\"spec\":{"
            + (nodeName == null ? "" : "\"nodeName\":\"" + nodeName + "\",")
            + "\"containers\":[{\"name\":\"etcd\",\"image\":\"etcd\"}]}}");
  }
}

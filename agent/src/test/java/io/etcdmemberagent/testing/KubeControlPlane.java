package io.etcdmemberagent.testing;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Kubernetes control plane for tests: its own etcd (the primary version), kube-apiserver on
 * a free port with TLS from a CA made here, client-certificate authentication (an admin in {@code
 * system:masters}), {@code --authorization-mode=RBAC}, ServiceAccount token signing (envtest's
 * flags are the model), and on demand kube-controller-manager with only the StatefulSet and
 * disruption controllers. Everything is stopped on close; the files stay in {@code dir}.
 */
public final class KubeControlPlane implements AutoCloseable {

  private final Path dir;
  private final KubeBinaries binaries;
  private final TestPki pki;
  private final int port = FreePorts.next();
  private final List<String> apiServerCommand;
  private final Process etcd;
  private Process apiServer;
  private Process controllerManager;
  private final KubeRest admin;
  private final TestPki.Issued adminCert;

  private KubeControlPlane(KubeBinaries binaries, Path dir, List<String> extraIps) {
    this.dir = dir;
    this.binaries = binaries;
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.pki = new TestPki(dir, "kube");
    String etcdUrl = "http://127.0.0.1:" + FreePorts.next();
    this.etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "kube-etcd",
            dir.resolve("etcd-data"),
            etcdUrl,
            dir.resolve("etcd.log"),
            "--unsafe-no-fsync");
    List<String> ips = new ArrayList<>(List.of("127.0.0.1", "10.0.0.1"));
    ips.addAll(extraIps);
    TestPki.Issued serving =
        pki.issue(
            "kube-apiserver",
            java.time.Instant.now().minus(Duration.ofDays(1)),
            java.time.Instant.now().plus(Duration.ofDays(365)),
            List.of(
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local"),
            ips);
    this.adminCert = pki.issueUser("test-admin", "system:masters");
    Path saKey = dir.resolve("sa.key");
    Path saPub = dir.resolve("sa.pub");
    TestPki.writeKeyPair(saKey, saPub);
    this.apiServerCommand =
        List.of(
            binaries.kubeApiServer().toString(),
            "--etcd-servers=" + etcdUrl,
            "--bind-address=0.0.0.0",
            "--secure-port=" + port,
            "--advertise-address=127.0.0.1",
            "--tls-cert-file=" + serving.cert(),
            "--tls-private-key-file=" + serving.key(),
            "--client-ca-file=" + pki.caCert(),
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://127.0.0.1:" + port,
            "--service-account-key-file=" + saPub,
            "--service-account-signing-key-file=" + saKey,
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--cert-dir=" + dir.resolve("certs"),
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            "--audit-policy-file=" + auditPolicy(),
            "--audit-log-path=" + dir.resolve("audit.log"),
            "--audit-log-format=json");
    this.admin = KubeRest.withCertificate(url(), pki.caCert(), adminCert.cert(), adminCert.key());
    startApiServer();
  }

  /**
   * Every request by a ServiceAccount, with its body: what the agent sent, as the server saw it;
   * and every write of a Pod or its status by anyone, with the object after it (the fault suite
   * tells from them whether a status patch changed anything).
   */
  private Path auditPolicy() {
    Path file = dir.resolve("audit-policy.yaml");
    write(
        file,
        """
        apiVersion: audit.k8s.io/v1
        kind: Policy
        omitStages: ["RequestReceived"]
        rules:
        - level: RequestResponse
          verbs: ["create", "patch", "update"]
          resources: [{group: "", resources: ["pods", "pods/status"]}]
        - level: Request
          userGroups: ["system:serviceaccounts"]
        - level: None
        """);
    return file;
  }

  /**
   * The audit log's entries (one per ServiceAccount request, at ResponseComplete): {@code verb},
   * {@code objectRef}, {@code responseStatus.code}, {@code user.username}, {@code requestObject}.
   */
  public List<JsonObject> audit() {
    try {
      Path file = dir.resolve("audit.log");
      if (!Files.exists(file)) {
        return List.of();
      }
      List<JsonObject> out = new ArrayList<>();
      for (String line : Files.readAllLines(file)) {
        if (!line.isBlank()) {
          out.add(com.google.gson.JsonParser.parseString(line).getAsJsonObject());
        }
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static KubeControlPlane shared;

  /**
   * One control plane for every test of this JVM that only needs the API server (each in its own
   * namespace): started on first use, stopped when the JVM ends.
   */
  public static synchronized KubeControlPlane shared() {
    if (shared == null) {
      try {
        shared = start(Files.createTempDirectory("kube-shared"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "kube-shared-close"));
    }
    return shared;
  }

  /**
   * Starts etcd and kube-apiserver in {@code dir}; the serving certificate also names {@code
   * extraIps} (e.g. the bridge address pods in network namespaces reach it on).
   */
  public static KubeControlPlane start(Path dir, String... extraIps) {
    return new KubeControlPlane(KubeBinaries.primary(), dir, List.of(extraIps));
  }

  /** Starts etcd and the kube-apiserver of {@code binaries}' minor line in {@code dir}. */
  public static KubeControlPlane start(KubeBinaries binaries, Path dir) {
    return new KubeControlPlane(binaries, dir, List.of());
  }

  /** (Re)starts kube-apiserver with the same flags and port; waits until it is ready. */
  public void startApiServer() {
    try {
      apiServer =
          new ProcessBuilder(apiServerCommand)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log("kube-apiserver").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    awaitReady();
  }

  private void awaitReady() {
    try {
      Poll.until(
          "kube-apiserver /readyz",
          Duration.ofSeconds(90),
          () -> {
            if (!apiServer.isAlive()) {
              throw new AssertionError(
                  "kube-apiserver exited: " + LogFiles.tail(log("kube-apiserver"), 15));
            }
            return admin.get("/readyz").status() == 200;
          });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + LogFiles.tail(log("kube-apiserver"), 15), e);
    }
  }

  /** Stops kube-apiserver (SIGTERM, then wait); {@link #startApiServer} brings it back. */
  public void stopApiServer() {
    apiServer.destroy();
    try {
      if (!apiServer.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
        Processes.kill(apiServer);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public Process apiServer() {
    return apiServer;
  }

  /** kube-controller-manager with only the StatefulSet and disruption controllers, as admin. */
  public void startControllerManager() {
    startControllerManager("statefulset,disruption");
  }

  /** kube-controller-manager with only these controllers (a comma list), as admin. */
  public void startControllerManager(String controllers) {
    List<String> command =
        List.of(
            binaries.kubeControllerManager().toString(),
            "--kubeconfig=" + adminKubeconfig(),
            "--controllers=" + controllers,
            "--leader-elect=false",
            "--secure-port=0",
            "--use-service-account-credentials=false",
            "--concurrent-statefulset-syncs=2");
    try {
      controllerManager =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(log("kube-controller-manager").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Path log(String component) {
    return dir.resolve(component + ".log");
  }

  /** The server as seen from this host. */
  public String url() {
    return "https://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  public Path caCert() {
    return pki.caCert();
  }

  /** The test's admin client (system:masters): to arrange and to read what the server stored. */
  public KubeRest admin() {
    return admin;
  }

  /** {@code gitVersion} from {@code /version}. */
  public String version() {
    return admin.getJson("/version").get("gitVersion").getAsString();
  }

  /** A kubeconfig for the admin (client certificate), for kubectl and the controller manager. */
  public Path adminKubeconfig() {
    Path file = dir.resolve("admin.kubeconfig");
    if (!Files.exists(file)) {
      write(
          file,
          kubeconfig(url())
              + "    client-certificate: "
              + adminCert.cert()
              + "\n    client-key: "
              + adminCert.key()
              + "\n");
    }
    return file;
  }

  /**
   * A kubeconfig whose user reads its bearer token from {@code tokenFile} (as a ServiceAccount's
   * projected token), for a server address {@code server}.
   */
  public Path tokenKubeconfig(Path file, String server, Path tokenFile) {
    write(file, kubeconfig(server) + "    tokenFile: " + tokenFile + "\n");
    return file;
  }

  private String kubeconfig(String server) {
    return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
        + "clusters:\n- name: test\n  cluster:\n    server: "
        + server
        + "\n    certificate-authority: "
        + pki.caCert()
        + "\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
        + "users:\n- name: test\n  user:\n";
  }

  /**
   * A ServiceAccount token from the TokenRequest API, valid for {@code ttl} (the server's minimum
   * is 10 minutes), bound to {@code boundObject} ({@code kind}/{@code name}/{@code uid}) when
   * given: deleting that object invalidates the token, as for a Pod's projected token.
   */
  public String token(
      String namespace, String serviceAccount, Duration ttl, JsonObject boundObject) {
    JsonObject spec = new JsonObject();
    spec.addProperty("expirationSeconds", ttl.toSeconds());
    if (boundObject != null) {
      spec.add("boundObjectRef", boundObject);
    }
    JsonObject request = new JsonObject();
    request.addProperty("apiVersion", "authentication.k8s.io/v1");
    request.addProperty("kind", "TokenRequest");
    request.add("spec", spec);
    return admin
        .postJson(
            "/api/v1/namespaces/" + namespace + "/serviceaccounts/" + serviceAccount + "/token",
            request.toString())
        .getAsJsonObject("status")
        .get("token")
        .getAsString();
  }

  /**
   * A ServiceAccount token signed here with the server's signing key, like one from the
   * TokenRequest API but with any expiry: the API server's minimum TTL is 10 minutes, so an expired
   * token cannot be asked for.
   */
  public String signedToken(
      String namespace, String serviceAccount, String uid, java.time.Instant expiresAt) {
    long exp = expiresAt.getEpochSecond();
    long iat = exp - 3600;
    String issuer = "https://127.0.0.1:" + port;
    String claims =
        "{\"iss\":\""
            + issuer
            + "\",\"aud\":[\""
            + issuer
            + "\"],\"sub\":\"system:serviceaccount:"
            + namespace
            + ":"
            + serviceAccount
            + "\",\"iat\":"
            + iat
            + ",\"nbf\":"
            + iat
            + ",\"exp\":"
            + exp
            + ",\"kubernetes.io\":{\"namespace\":\""
            + namespace
            + "\",\"serviceaccount\":{\"name\":\""
            + serviceAccount
            + "\",\"uid\":\""
            + uid
            + "\"}}}";
    java.util.Base64.Encoder b64 = java.util.Base64.getUrlEncoder().withoutPadding();
    String signed =
        b64.encodeToString("{\"alg\":\"ES256\",\"typ\":\"JWT\"}".getBytes())
            + "."
            + b64.encodeToString(claims.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    try {
      java.security.PrivateKey key =
          new io.etcdmemberagent.tls.ClientTlsFiles(
                  java.util.Optional.empty(),
                  java.util.Optional.empty(),
                  java.util.Optional.of(dir.resolve("sa.key")))
              .load()
              .key()
              .orElseThrow();
      java.security.Signature signer =
          java.security.Signature.getInstance("SHA256withECDSAinP1363Format");
      signer.initSign(key);
      signer.update(signed.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      return signed + "." + b64.encodeToString(signer.sign());
    } catch (Exception e) {
      throw new IllegalStateException("cannot sign a token: " + e, e);
    }
  }

  /** Creates a namespace (and waits until it can hold objects). */
  public void createNamespace(String name) {
    admin.postJson(
        "/api/v1/namespaces",
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" + name + "\"}}");
  }

  /**
   * The chart's metrics-reader Role (get on etcdmembers/metrics and etcdmembers/status, what the
   * agents ask with {@code --authz-attributes=resource}, the default) under {@code role} in {@code
   * namespace}, bound to the ServiceAccount {@code namespace/serviceAccount} by {@code binding}.
   */
  public void grantMetricsRead(
      String role, String binding, String namespace, String serviceAccount) {
    // posted, not "kubectl create role": kubectl looks the resource up, and the CRD may be absent
    admin.postJson(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace + "/roles",
        """
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"%s"},
         "rules":[{"apiGroups":["etcd-member-agent.io"],
           "resources":["etcdmembers/metrics","etcdmembers/status"],"verbs":["get"]}]}
        """
            .formatted(role));
    kubectl(
        "create",
        "rolebinding",
        binding,
        "-n",
        namespace,
        "--role=" + role,
        "--serviceaccount=" + namespace + ":" + serviceAccount);
  }

  /** The same as a ClusterRole of non-resource paths ({@code --authz-attributes=non-resource}). */
  public void grantNonResourceMetricsRead(
      String role, String binding, String namespace, String serviceAccount) {
    kubectl(
        "create",
        "clusterrole",
        role,
        "--verb=get",
        "--non-resource-url=/metrics",
        "--non-resource-url=/status");
    kubectl(
        "create",
        "clusterrolebinding",
        binding,
        "--clusterrole=" + role,
        "--serviceaccount=" + namespace + ":" + serviceAccount);
  }

  /** Runs Debian's kubectl as the admin; fails on a non-zero exit. */
  public String kubectl(String... args) {
    List<String> command = new ArrayList<>(List.of("kubectl", "--kubeconfig=" + adminKubeconfig()));
    command.addAll(List.of(args));
    return Processes.output(command.toArray(String[]::new));
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    if (controllerManager != null) {
      Processes.kill(controllerManager);
    }
    if (apiServer != null) {
      Processes.signal(apiServer, "CONT");
      Processes.kill(apiServer);
    }
    Processes.kill(etcd);
  }
}

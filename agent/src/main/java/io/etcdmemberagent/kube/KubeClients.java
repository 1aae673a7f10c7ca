package io.etcdmemberagent.kube;

import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.SSLUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.Credentials;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.internal.tls.OkHostnameVerifier;

/**
 * The authenticated connection every adapter here uses, as client-java's {@code ClientBuilder}
 * makes it (from a kubeconfig, or in-cluster from the ServiceAccount) but without its {@code
 * ApiClient}, whose construction loads client-java's whole model: the server and its CA, {@code
 * insecure-skip-tls-verify} and {@code tls-server-name}; a client certificate, basic auth or a
 * token in client-java's order (tokens of an exec plugin or auth provider are asked for again every
 * minute); a {@code tokenFile} re-read per request ({@link BearerTokenFile}); connect, read and
 * write timeouts and no silent retries.
 */
final class KubeClients {

  static final Path IN_CLUSTER_CA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  private static final Duration PLUGIN_TOKEN_REFRESH = Duration.ofMinutes(1);

  private KubeClients() {}

  static KubeHttp connect(Optional<Path> kubeconfig, Duration timeout) throws IOException {
    long millis = timeout.toMillis();
    OkHttpClient.Builder http =
        new OkHttpClient.Builder()
            .connectTimeout(millis, TimeUnit.MILLISECONDS)
            .readTimeout(millis, TimeUnit.MILLISECONDS)
            .writeTimeout(millis, TimeUnit.MILLISECONDS)
            .callTimeout(millis * 2, TimeUnit.MILLISECONDS)
            // The publishers retry with backoff and Retry-After; no silent retries below them.
            .retryOnConnectionFailure(false);
    String server;
    if (kubeconfig.isPresent()) {
      KubeConfig config;
      try (Reader reader = Files.newBufferedReader(kubeconfig.get(), StandardCharsets.UTF_8)) {
        config = KubeConfig.loadKubeConfig(reader);
      }
      config.setFile(kubeconfig.get().toAbsolutePath().toFile()); // relative paths, as kubectl
      server = config.getServer();
      byte[] ca =
          config.getDataOrFileRelative(
              config.getCertificateAuthorityData(), config.getCertificateAuthorityFile());
      KeyManager[] keys = authenticate(http, config);
      tls(http, config.verifySSL(), ca, keys, config.getTlsServerName());
      // Added last, so it runs after any token above and replaces it.
      BearerTokenFile.of(config, kubeconfig.get()).ifPresent(http::addInterceptor);
    } else {
      String host = System.getenv("KUBERNETES_SERVICE_HOST");
      String port = System.getenv("KUBERNETES_SERVICE_PORT");
      if (host == null || port == null) {
        throw new IOException("not in a Pod: KUBERNETES_SERVICE_HOST/PORT are not set");
      }
      server = "https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
      tls(http, true, Files.readAllBytes(IN_CLUSTER_CA), null, null);
      http.addInterceptor(new BearerTokenFile(BearerTokenFile.IN_CLUSTER));
    }
    HttpUrl url = server == null ? null : HttpUrl.parse(server);
    if (url == null) {
      throw new IOException("the kubeconfig's server is not a URL: " + server);
    }
    return new KubeHttp(http.build(), url);
  }

  /** Client-java's order: a client certificate, a user and password, a token, an exec's cert. */
  private static KeyManager[] authenticate(OkHttpClient.Builder http, KubeConfig config)
      throws IOException {
    byte[] cert =
        config.getDataOrFileRelative(
            config.getClientCertificateData(), config.getClientCertificateFile());
    byte[] key = config.getDataOrFileRelative(config.getClientKeyData(), config.getClientKeyFile());
    if (cert != null && key != null) {
      return keyManagers(cert, key);
    }
    String user = config.getUsername();
    String password = config.getPassword();
    if (user != null && !user.isEmpty() && password != null && !password.isEmpty()) {
      String basic = Credentials.basic(user, password);
      http.addInterceptor(
          chain ->
              chain.proceed(chain.request().newBuilder().header("Authorization", basic).build()));
      return null;
    }
    Map<String, String> credentials = config.getCredentials();
    if (credentials == null) {
      return null;
    }
    String token = credentials.get(KubeConfig.CRED_TOKEN_KEY);
    if (token != null && !token.isEmpty()) {
      http.addInterceptor(new CredentialToken(token, config, PLUGIN_TOKEN_REFRESH));
      return null;
    }
    String pluginCert = credentials.get(KubeConfig.CRED_CLIENT_CERTIFICATE_DATA_KEY);
    String pluginKey = credentials.get(KubeConfig.CRED_CLIENT_KEY_DATA_KEY);
    if (pluginCert != null && pluginKey != null) {
      return keyManagers(
          pluginCert.getBytes(StandardCharsets.UTF_8), pluginKey.getBytes(StandardCharsets.UTF_8));
    }
    return null;
  }

  private static KeyManager[] keyManagers(byte[] cert, byte[] key) throws IOException {
    try {
      return SSLUtils.keyManagers(cert, key, SSLUtils.recognizePrivateKeyAlgo(key), "", null, null);
    } catch (GeneralSecurityException | RuntimeException e) {
      throw new IOException("the kubeconfig's client certificate or key cannot be used: " + e, e);
    }
  }

  private static void tls(
      OkHttpClient.Builder http, boolean verify, byte[] ca, KeyManager[] keys, String serverName)
      throws IOException {
    boolean noServerName = serverName == null || serverName.isEmpty();
    if (verify && ca == null && keys == null && noServerName) {
      return; // OkHttp's defaults, set up on the first TLS call: the JVM's trust store is large
    }
    try {
      X509TrustManager trust = verify ? trustManager(ca) : TrustAll.INSTANCE;
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys, new TrustManager[] {trust}, null);
      http.sslSocketFactory(context.getSocketFactory(), trust);
      if (!verify) {
        http.hostnameVerifier((host, session) -> true);
      } else if (!noServerName) {
        http.hostnameVerifier(
            (host, session) -> OkHostnameVerifier.INSTANCE.verify(serverName, session));
      }
    } catch (GeneralSecurityException e) {
      throw new IOException("the API server's CA cannot be used: " + e, e);
    }
  }

  /** The CA's certificates, or the JVM's own trust store when the kubeconfig names none. */
  private static X509TrustManager trustManager(byte[] ca)
      throws GeneralSecurityException, IOException {
    KeyStore store = null;
    if (ca != null) {
      store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(ca))) {
        store.setCertificateEntry("ca" + i++, c);
      }
      if (i == 0) {
        throw new IOException("the API server's CA holds no certificate");
      }
    }
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    for (TrustManager m : factory.getTrustManagers()) {
      if (m instanceof X509TrustManager x) {
        return x;
      }
    }
    throw new IOException("no X.509 trust manager");
  }

  /** {@code insecure-skip-tls-verify: true}: the kubeconfig asked for it. */
  private enum TrustAll implements X509TrustManager {
    INSTANCE;

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}

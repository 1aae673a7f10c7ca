package io.etcdmemberagent.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The raw values of a subcommand's flags, from arguments (winning) and environment twins, with
 * typed accessors that reject bad input with one line naming the flag and the value.
 */
public final class FlagValues {

  private final Map<String, Flag> flags = new LinkedHashMap<>();
  private final Map<String, String> values = new HashMap<>();
  private final Map<String, String> sources = new HashMap<>();

  private FlagValues(List<Flag> declared) {
    declared.forEach(f -> flags.put(f.name(), f));
  }

  /**
   * Parses {@code --flag=value} and {@code --flag value}. Environment variables with our prefix
   * that match no flag of any subcommand ({@code knownEnvNames}) are rejected as typos.
   */
  public static FlagValues parse(
      List<Flag> declared, List<String> args, Map<String, String> env, Set<String> knownEnvNames)
      throws ConfigException {
    FlagValues v = new FlagValues(declared);
    for (Map.Entry<String, String> e : env.entrySet()) {
      String key = e.getKey();
      if (!key.startsWith(Flag.ENV_PREFIX)) {
        continue;
      }
      Optional<Flag> flag = declared.stream().filter(f -> f.envName().equals(key)).findFirst();
      if (flag.isPresent()) {
        v.put(flag.get(), e.getValue(), key);
      } else if (!knownEnvNames.contains(key)) {
        throw new ConfigException("unknown environment variable " + key + " (no such flag)");
      }
    }
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new ConfigException(
            "unexpected argument \"" + arg + "\" (flags look like --name=value)");
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
      Flag flag = v.flags.get(name);
      if (flag == null) {
        throw new ConfigException("unknown flag --" + name);
      }
      String value;
      if (eq >= 0) {
        value = arg.substring(eq + 1);
      } else if (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
        value = args.get(++i);
      } else {
        throw new ConfigException("flag --" + name + " needs a value");
      }
      v.put(flag, value, flag.display());
    }
    return v;
  }

  private void put(Flag flag, String value, String source) {
    values.put(flag.name(), value);
    sources.put(flag.name(), source);
  }

  private Flag flag(String name) {
    Flag f = flags.get(name);
    if (f == null) {
      throw new IllegalArgumentException("undeclared flag " + name);
    }
    return f;
  }

  /** The value given or the default; empty when neither exists or the value is blank. */
  public Optional<String> optional(String name) {
    String value = values.getOrDefault(name, flag(name).defaultValue());
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
  }

  public String string(String name) throws ConfigException {
    return optional(name).orElseThrow(() -> new ConfigException(label(name) + " is required"));
  }

  private String label(String name) {
    return sources.getOrDefault(name, flag(name).display());
  }

  private ConfigException invalid(String name, String value, String expected) {
    return new ConfigException(
        "invalid value \"" + value + "\" for " + label(name) + ": expected " + expected);
  }

  public Duration positiveDuration(String name) throws ConfigException {
    String text = string(name);
    try {
      Duration d = GoDuration.parse(text);
      if (d.isZero() || d.isNegative()) {
        throw invalid(name, text, "a positive duration like 500ms, 2s or 5m");
      }
      return d;
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw invalid(name, text, "a duration like 500ms, 2s or 5m");
    }
  }

  /** A duration of zero or more ({@code 0} often means "no limit"). */
  public Duration duration(String name) throws ConfigException {
    String text = string(name);
    try {
      return GoDuration.parse(text);
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw invalid(name, text, "a duration like 500ms, 2s or 5m");
    }
  }

  public long longAtLeast(String name, long min) throws ConfigException {
    String text = string(name);
    try {
      long value = Long.parseLong(text);
      if (value < min) {
        throw invalid(name, text, "a whole number of at least " + min);
      }
      return value;
    } catch (NumberFormatException e) {
      throw invalid(name, text, "a whole number of at least " + min);
    }
  }

  public int intBetween(String name, int min, int max) throws ConfigException {
    String text = string(name);
    String expected = "a whole number from " + min + " to " + max;
    try {
      int value = Integer.parseInt(text);
      if (value < min || value > max) {
        throw invalid(name, text, expected);
      }
      return value;
    } catch (NumberFormatException e) {
      throw invalid(name, text, expected);
    }
  }

  /** A percentage like {@code 5%}, as a ratio from 0 to 1. */
  public double percent(String name) throws ConfigException {
    String text = string(name);
    String expected = "a percentage from 0% to 100%, like 5%";
    if (!text.endsWith("%")) {
      throw invalid(name, text, expected);
    }
    try {
      double value = Double.parseDouble(text.substring(0, text.length() - 1));
      if (value < 0 || value > 100 || Double.isNaN(value)) {
        throw invalid(name, text, expected);
      }
      return value / 100;
    } catch (NumberFormatException e) {
      throw invalid(name, text, expected);
    }
  }

  public int port(String name) throws ConfigException {
    String text = string(name);
    try {
      int port = Integer.parseInt(text);
      if (port < 0 || port > 65535) {
        throw invalid(name, text, "a port number from 0 to 65535");
      }
      return port;
    } catch (NumberFormatException e) {
      throw invalid(name, text, "a port number from 0 to 65535");
    }
  }

  /** The value, which must match {@code pattern} entirely when set. */
  public Optional<String> optionalMatching(String name, String pattern, String expected)
      throws ConfigException {
    Optional<String> text = optional(name);
    if (text.isPresent() && !text.get().matches(pattern)) {
      throw invalid(name, text.get(), expected);
    }
    return text;
  }

  public boolean bool(String name) throws ConfigException {
    String text = string(name);
    return switch (text.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw invalid(name, text, "true or false");
    };
  }

  public String choice(String name, List<String> allowed) throws ConfigException {
    String text = string(name);
    if (!allowed.contains(text)) {
      throw invalid(name, text, "one of " + String.join(", ", allowed));
    }
    return text;
  }

  /** An http(s) URL with a host and a port, such as an etcd client URL. */
  public URI url(String name) throws ConfigException {
    return parseUrl(name, string(name));
  }

  public List<URI> urlList(String name) throws ConfigException {
    List<URI> urls = new ArrayList<>();
    for (String part : optional(name).orElse("").split(",")) {
      if (!part.isBlank()) {
        urls.add(parseUrl(name, part.trim()));
      }
    }
    return urls;
  }

  private URI parseUrl(String name, String text) throws ConfigException {
    String expected = "an http:// or https:// URL with host and port, like http://127.0.0.1:2379";
    try {
      URI uri = new URI(text);
      boolean schemeOk = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
      if (!schemeOk || uri.getHost() == null || uri.getPort() < 0) {
        throw invalid(name, text, expected);
      }
      return uri;
    } catch (URISyntaxException e) {
      throw invalid(name, text, expected);
    }
  }

  /** A path to a readable regular file, or empty when the flag is not set. */
  public Optional<Path> readableFile(String name) throws ConfigException {
    Optional<String> text = optional(name);
    if (text.isEmpty()) {
      return Optional.empty();
    }
    Path path = Path.of(text.get());
    if (!Files.isRegularFile(path)) {
      throw new ConfigException(
          "invalid value \"" + text.get() + "\" for " + label(name) + ": no such file");
    }
    if (!Files.isReadable(path)) {
      throw new ConfigException(
          "invalid value \"" + text.get() + "\" for " + label(name) + ": file is not readable");
    }
    return Optional.of(path);
  }
}

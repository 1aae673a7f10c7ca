package io.etcdmemberagent.config;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The variables the kubelet injects for each ClusterIP Service in the namespace unless the Pod sets
 * {@code enableServiceLinks: false}: {@code NAME_SERVICE_HOST}, {@code NAME_SERVICE_PORT[_P]} and
 * the docker-link set {@code NAME_PORT}, {@code NAME_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]}. A
 * Service named {@code etcd-member-agent-…} gives names with our prefix; they are set aside only
 * when name and value both have the kubelet's shape, so a mistyped variable is still refused.
 */
public record ServiceLinks(List<String> names, Map<String, String> remaining) {

  private static final String IP =
      "(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)";
  private static final String PORT = "[0-9]{1,5}";
  private static final Pattern HOST = Pattern.compile(".+_SERVICE_HOST");
  private static final Pattern SERVICE_PORT = Pattern.compile(".+_SERVICE_PORT(?:_[A-Z0-9_]+)?");
  private static final Pattern LINK = Pattern.compile(".+_PORT");
  private static final Pattern PORT_LINK = Pattern.compile(".+_PORT_(" + PORT + ")_(TCP|UDP|SCTP)");
  private static final Pattern PORT_FIELD =
      Pattern.compile(".+_PORT_(" + PORT + ")_(TCP|UDP|SCTP)_(PROTO|PORT|ADDR)");
  private static final Pattern LINK_VALUE =
      Pattern.compile("(tcp|udp|sctp)://(?:" + IP + "|\\[" + IP + "\\]):(" + PORT + ")");

  public static ServiceLinks in(Map<String, String> env) {
    Map<String, String> remaining = new HashMap<>(env);
    List<String> names =
        env.entrySet().stream()
            .filter(e -> e.getKey().startsWith(Flag.ENV_PREFIX))
            .filter(e -> isServiceLink(e.getKey(), e.getValue()))
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    names.forEach(remaining::remove);
    return new ServiceLinks(names, Map.copyOf(remaining));
  }

  static boolean isServiceLink(String name, String value) {
    Matcher field = PORT_FIELD.matcher(name);
    if (field.matches()) {
      String proto = field.group(2).toLowerCase(Locale.ROOT);
      return switch (field.group(3)) {
        case "PROTO" -> value.equals(proto);
        case "PORT" -> value.equals(field.group(1));
        default -> value.matches(IP);
      };
    }
    Matcher portLink = PORT_LINK.matcher(name);
    if (portLink.matches()) {
      Matcher link = LINK_VALUE.matcher(value);
      return link.matches()
          && link.group(1).equals(portLink.group(2).toLowerCase(Locale.ROOT))
          && link.group(2).equals(portLink.group(1));
    }
    if (HOST.matcher(name).matches()) {
      return value.matches(IP);
    }
    if (SERVICE_PORT.matcher(name).matches()) {
      return value.matches(PORT);
    }
    return LINK.matcher(name).matches() && LINK_VALUE.matcher(value).matches();
  }

  /** One line for the log, or empty when nothing was set aside. */
  public String describe() {
    if (names.isEmpty()) {
      return "";
    }
    return "set aside "
        + names.size()
        + (names.size() == 1 ? " variable" : " variables")
        + " the kubelet injects for Services named etcd-member-agent-… ("
        + String.join(", ", names)
        + "); set enableServiceLinks: false in the Pod spec";
  }
}

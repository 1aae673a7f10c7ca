package io.etcdmemberagent.core.join;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes an etcd {@code --config-file} from a template of static settings (a Helm ConfigMap) plus
 * the keys {@code join} decides (name, data dir, initial cluster and state, advertised URLs). etcd
 * ignores flags and environment variables when a config file is given, so the file must hold
 * everything; it lets an etcd image without a shell start from {@code join}'s decision. Pure.
 */
public final class EtcdConfigYaml {

  private EtcdConfigYaml() {}

  /**
   * The template with every top-level line of an owned key removed and the owned keys appended,
   * each value as a double-quoted YAML string.
   */
  public static String render(String template, Map<String, String> owned) {
    Set<String> keys = owned.keySet();
    List<String> kept = new ArrayList<>();
    for (String line : template.split("\n", -1)) {
      int colon = line.indexOf(':');
      boolean topLevel = !line.isEmpty() && !Character.isWhitespace(line.charAt(0));
      if (topLevel && colon > 0 && keys.contains(line.substring(0, colon).strip())) {
        continue;
      }
      kept.add(line);
    }
    StringBuilder out = new StringBuilder(String.join("\n", kept).stripTrailing());
    out.append("\n# decided by etcd-member-agent join\n");
    owned.forEach((k, v) -> out.append(k).append(": ").append(quote(v)).append('\n'));
    return out.toString();
  }

  private static String quote(String value) {
    return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}

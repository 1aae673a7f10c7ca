package io.etcdmemberagent.config;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** Every subcommand's flags, so an environment twin meant for another one is not a typo. */
public final class Subcommands {

  private Subcommands() {}

  public static List<List<Flag>> all() {
    return List.of(RunConfig.FLAGS, JoinConfig.FLAGS);
  }

  public static Set<String> allEnvNames() {
    return all().stream()
        .flatMap(List::stream)
        .map(Flag::envName)
        .collect(Collectors.toUnmodifiableSet());
  }

  /** Usage text listing a subcommand's flags, their env twins and defaults. */
  public static String usage(String subcommand, List<Flag> flags) {
    StringBuilder out = new StringBuilder("usage: etcd-member-agent " + subcommand + " [flags]\n");
    for (Flag f : flags) {
      out.append(String.format("  %-22s %s%n", f.display(), f.help()));
      String dflt =
          f.defaultValue() == null || f.defaultValue().isEmpty()
              ? ""
              : " (default " + f.defaultValue() + ")";
      out.append(String.format("  %-22s env %s%s%n", "", f.envName(), dflt));
    }
    return out.toString();
  }
}

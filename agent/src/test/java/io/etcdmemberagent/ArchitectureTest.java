package io.etcdmemberagent;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The layering rule of DESIGN.md §5, as a build check. */
class ArchitectureTest {

  static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.etcdmemberagent");

  static final String[] ADAPTERS = {"etcd", "kube", "http", "metrics", "config", "disk", "tls"};

  @Test
  void theCoreUsesNoLibraryAndNoIo() {
    classes()
        .that()
        .resideInAPackage("io.etcdmemberagent.core..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "io.etcdmemberagent.core..", "java.lang..", "java.util..", "java.time..")
        .check(CLASSES);
  }

  static final String CORE = "io.etcdmemberagent.core";

  /**
   * The core has rooms by concern, as {@code app} has. The core itself holds what several rooms
   * share: etcd's answers, the etcd port ({@code EtcdGateway}), the checks' currency ({@code
   * Check}), the Pod's events; it uses no room. Each room uses the core and the rooms named here,
   * and no two rooms depend on each other both ways. A Kubernetes port lives in the room that uses
   * it ({@code PodApi} and {@code MemberResourceApi} in publish, {@code StatefulSetApi} in
   * membership, {@code AccessReviews} in access).
   */
  @Test
  void eachRoomOfTheCoreUsesOnlyTheCoreAndTheRoomsItBuildsOn() {
    classes()
        .that()
        .resideInAPackage(CORE)
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(CORE, "java..")
        .check(CLASSES);
    roomDependsOnlyOn("access");
    roomDependsOnlyOn("disk");
    roomDependsOnlyOn("tls");
    roomDependsOnlyOn("readiness", "disk", "tls");
    roomDependsOnlyOn("promotion", "readiness");
    roomDependsOnlyOn("poll", "readiness", "promotion");
    roomDependsOnlyOn("membership");
    roomDependsOnlyOn("join", "membership");
    roomDependsOnlyOn(
        "publish", "disk", "tls", "readiness", "promotion", "poll", "join", "membership");
    slices().matching(CORE + ".(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  private static void roomDependsOnlyOn(String room, String... buildsOn) {
    java.util.List<String> allowed = new java.util.ArrayList<>(java.util.List.of(CORE, "java.."));
    allowed.add(CORE + "." + room + "..");
    for (String other : buildsOn) {
      allowed.add(CORE + "." + other + "..");
    }
    classes()
        .that()
        .resideInAPackage(CORE + "." + room + "..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(allowed.toArray(String[]::new))
        .check(CLASSES);
  }

  @Test
  void theSharedSupportCodeUsesOnlyTheJdkBasics() {
    classes()
        .that()
        .resideInAPackage("io.etcdmemberagent.support..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "io.etcdmemberagent.support..",
            "java.lang..",
            "java.util..",
            "java.io..",
            "java.time..")
        .check(CLASSES);
  }

  @Test
  void noAdapterImportsAnother() {
    for (String adapter : ADAPTERS) {
      for (String other : ADAPTERS) {
        if (!adapter.equals(other)) {
          noClasses()
              .that()
              .resideInAPackage("io.etcdmemberagent." + adapter + "..")
              .should()
              .dependOnClassesThat()
              .resideInAPackage("io.etcdmemberagent." + other + "..")
              .check(CLASSES);
        }
      }
      noClasses()
          .that()
          .resideInAPackage("io.etcdmemberagent." + adapter + "..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.etcdmemberagent.app..")
          .check(CLASSES);
    }
  }

  @Test
  void eachLibraryStaysInItsAdapter() {
    libraryOnlyIn("io.etcd..", "etcd");
    libraryOnlyIn("io.grpc..", "etcd");
    libraryOnlyIn("io.netty..", "etcd");
    libraryOnlyIn("io.javalin..", "http");
    libraryOnlyIn("io.micrometer..", "metrics");
    libraryOnlyIn("io.kubernetes..", "kube");
    libraryOnlyIn("okhttp3..", "kube"); // client-java's transport, used directly
    libraryOnlyIn("com.google.gson..", "kube"); // client-java's JSON library, for answers
    libraryOnlyIn("org.bouncycastle..", "tls");
    libraryOnlyIn("com.sun.jna..", "disk");
  }

  static final String APP = "io.etcdmemberagent.app";

  /**
   * {@code app} wires three concerns, each in a package of its own: the poll (observe, decide,
   * serve the verdict), publishing to Kubernetes, and changing the membership (promote, remove
   * surplus members). Each decides through the core and reaches etcd and Kubernetes only through
   * the core's interfaces; only the wiring in {@code app} and the {@code join} command know
   * adapters. The poll hands promotions to the membership path; nothing else crosses between
   * concerns.
   */
  @Test
  void eachConcernUsesOnlyTheCoreTheSharedSupportAndWhatItHandsWorkTo() {
    concernDependsOnlyOn("poll", "membership");
    concernDependsOnlyOn("publish");
    concernDependsOnlyOn("membership");
  }

  /** The commands are entry points: the wiring never reaches into {@code join}, nor the reverse. */
  @Test
  void theRunWiringAndTheJoinCommandStayApart() {
    noClasses()
        .that()
        .resideInAPackage(APP)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(APP + ".join..")
        .check(CLASSES);
    noClasses()
        .that()
        .resideInAPackage(APP + ".join..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(APP + ".poll..", APP + ".membership..")
        .check(CLASSES);
    noClasses()
        .that()
        .resideOutsideOfPackage(APP + "..")
        .and()
        .doNotHaveFullyQualifiedName("io.etcdmemberagent.Main")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(APP + "..")
        .check(CLASSES);
  }

  private static void concernDependsOnlyOn(String concern, String... handsWorkTo) {
    java.util.List<String> allowed = new java.util.ArrayList<>();
    allowed.add(APP + "." + concern + "..");
    for (String other : handsWorkTo) {
      allowed.add(APP + "." + other + "..");
    }
    allowed.addAll(
        java.util.List.of("io.etcdmemberagent.core..", "io.etcdmemberagent.support..", "java.."));
    classes()
        .that()
        .resideInAPackage(APP + "." + concern + "..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(allowed.toArray(String[]::new))
        .check(CLASSES);
  }

  /** The shaded jar leaves out client-java's generated API and models (agent/pom.xml). */
  @Test
  void noClassUsesClientJavasGeneratedApi() {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.kubernetes.client.openapi..",
            "io.kubernetes.client.proto..",
            "io.kubernetes.client.custom..")
        .check(CLASSES);
  }

  private static void libraryOnlyIn(String library, String adapter) {
    noClasses()
        .that()
        .resideOutsideOfPackage("io.etcdmemberagent." + adapter + "..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(library)
        .check(CLASSES);
  }

  @Test
  void onlyMainExitsTheProcess() {
    noClasses()
        .that()
        .doNotHaveFullyQualifiedName("io.etcdmemberagent.Main")
        .should()
        .callMethod(System.class, "exit", int.class)
        .check(CLASSES);
  }
}

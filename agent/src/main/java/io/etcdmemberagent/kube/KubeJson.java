package io.etcdmemberagent.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * API server answers read as plain maps, lists, strings, numbers and booleans, with lenient
 * accessors: a field that is missing or of another type reads as empty, never as an exception.
 */
final class KubeJson {

  private KubeJson() {}

  /** The object {@code body} holds; an empty map when it is not a JSON object. */
  static Map<?, ?> object(String body) {
    try {
      return map(plain(JsonParser.parseString(body)));
    } catch (RuntimeException notJson) {
      return Map.of();
    }
  }

  private static Object plain(JsonElement e) {
    if (e == null || e.isJsonNull()) {
      return null;
    }
    if (e instanceof JsonObject o) {
      Map<String, Object> m = new LinkedHashMap<>();
      o.entrySet().forEach(entry -> m.put(entry.getKey(), plain(entry.getValue())));
      return m;
    }
    if (e.isJsonArray()) {
      List<Object> l = new ArrayList<>();
      e.getAsJsonArray().forEach(item -> l.add(plain(item)));
      return l;
    }
    JsonPrimitive p = e.getAsJsonPrimitive();
    if (p.isBoolean()) {
      return p.getAsBoolean();
    }
    return p.isNumber() ? p.getAsNumber() : p.getAsString();
  }

  static Map<?, ?> map(Object o) {
    return o instanceof Map<?, ?> m ? m : Map.of();
  }

  static List<?> list(Object o) {
    return o instanceof List<?> l ? l : List.of();
  }

  static String text(Object o) {
    return o == null ? "" : o.toString();
  }

  static long number(Object o) {
    return o instanceof Number n ? n.longValue() : 0;
  }

  /** An RFC 3339 time; the epoch when missing or not one. */
  static Instant instant(Object o) {
    try {
      return o == null ? Instant.EPOCH : OffsetDateTime.parse(o.toString()).toInstant();
    } catch (RuntimeException e) {
      return Instant.EPOCH;
    }
  }
}

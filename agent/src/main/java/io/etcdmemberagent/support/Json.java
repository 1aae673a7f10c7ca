package io.etcdmemberagent.support;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/** Writes maps, lists, strings, numbers, booleans and null as JSON. */
public final class Json {

  private Json() {}

  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value);
    return out.toString();
  }

  private static void write(StringBuilder out, Object value) {
    if (value instanceof Optional<?> o) {
      write(out, o.orElse(null));
    } else if (value instanceof OptionalLong o) {
      write(out, o.isPresent() ? o.getAsLong() : null);
    } else if (value == null) {
      out.append("null");
    } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
      out.append(value);
    } else if (value instanceof Double d) {
      out.append(d.isNaN() || d.isInfinite() ? "null" : d.toString());
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue());
      }
      out.append('}');
    } else if (value instanceof Collection<?> list) {
      out.append('[');
      boolean first = true;
      for (Object item : list) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(out, item);
      }
      out.append(']');
    } else {
      string(out, value.toString());
    }
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}

package io.etcdmemberagent.tls;

/** A PEM file that cannot be used; the message names the flag and the file. */
public final class TlsFileException extends Exception {
  public TlsFileException(String message) {
    super(message);
  }
}

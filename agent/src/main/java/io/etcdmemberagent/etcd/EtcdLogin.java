package io.etcdmemberagent.etcd;

import java.nio.file.Path;

/**
 * A user name and the file holding its password. The file is read each time the agent
 * authenticates, so a rotated Secret is used as soon as etcd refuses the old password or token.
 */
public record EtcdLogin(String user, Path passwordFile) {}

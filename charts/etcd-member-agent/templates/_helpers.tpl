{{- define "ema.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "ema.labels" -}}
app.kubernetes.io/name: etcd-member-agent
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ema.selectorLabels" -}}
app.kubernetes.io/name: etcd-member-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ema.serviceAccountName" -}}
{{- default (include "ema.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "ema.peerService" -}}
{{- printf "%s-peer" (include "ema.fullname" .) -}}
{{- end -}}

{{- define "ema.clientService" -}}
{{- printf "%s-client" (include "ema.fullname" .) -}}
{{- end -}}

{{- define "ema.clientScheme" -}}
{{- if .Values.tls.client.enabled }}https{{ else }}http{{ end -}}
{{- end -}}

{{- define "ema.peerScheme" -}}
{{- if .Values.tls.peer.enabled }}https{{ else }}http{{ end -}}
{{- end -}}

{{/* This member's advertised peer URL; $(POD_NAME) and $(POD_NAMESPACE) are expanded by the kubelet. */}}
{{- define "ema.peerUrl" -}}
{{- printf "%s://$(POD_NAME).%s.$(POD_NAMESPACE).svc:%v" (include "ema.peerScheme" .) (include "ema.peerService" .) .Values.etcd.peerPort -}}
{{- end -}}

{{- define "ema.ownClientUrl" -}}
{{- printf "%s://$(POD_NAME).%s.$(POD_NAMESPACE).svc:%v" (include "ema.clientScheme" .) (include "ema.peerService" .) .Values.etcd.clientPort -}}
{{- end -}}

{{/* The client Service: only ready voters are behind it, which is what join and a learner need. */}}
{{- define "ema.clusterEndpoints" -}}
{{- printf "%s://%s.$(POD_NAMESPACE).svc:%v" (include "ema.clientScheme" .) (include "ema.clientService" .) .Values.etcd.clientPort -}}
{{- end -}}

{{- define "ema.podEnv" -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
{{- end -}}

{{/* Client TLS for join and run: the agent's own client certificate. */}}
{{- define "ema.clientTlsEnv" -}}
{{- if .Values.tls.client.enabled }}
- name: ETCD_MEMBER_AGENT_CACERT
  value: /etc/etcd-member-agent/tls/client/ca.crt
- name: ETCD_MEMBER_AGENT_CERT
  value: /etc/etcd-member-agent/tls/client/tls.crt
- name: ETCD_MEMBER_AGENT_KEY
  value: /etc/etcd-member-agent/tls/client/tls.key
{{- end }}
{{- end -}}

{{/* Pod Security Standard "restricted" for every container. */}}
{{- define "ema.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities: {drop: [ALL]}
seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{- define "ema.agentImage" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "ema.agentScheme" -}}
{{- if .Values.agent.https.enabled }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}

{{/* The Secret with the agent's serving pair: the user's, or the one the chart generates. */}}
{{- define "ema.servingSecret" -}}
{{- default (printf "%s-agent-serving" (include "ema.fullname" .)) .Values.agent.https.secret -}}
{{- end -}}

{{/* Cluster-scoped names carry the namespace: two releases of one name in two namespaces. */}}
{{- define "ema.metricsReader" -}}
{{- if eq .Values.agent.authzAttributes "resource" -}}
{{- printf "%s-metrics-reader" (include "ema.fullname" .) -}}
{{- else -}}
{{- printf "%s-%s-metrics-reader" .Release.Namespace (include "ema.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Role (namespaced, resource attributes) or ClusterRole (non-resource paths). */}}
{{- define "ema.metricsReaderKind" -}}
{{- if eq .Values.agent.authzAttributes "resource" }}Role{{ else }}ClusterRole{{ end -}}
{{- end -}}

{{- define "ema.kubeAuthz" -}}
{{- if eq .Values.agent.authz "kube" }}{{ if not .Values.agent.https.enabled }}{{ fail "agent.authz=kube needs agent.https.enabled=true: bearer tokens are never read over plain HTTP" }}{{ end }}true{{ end -}}
{{- end -}}

{{/*
The ServiceAccount token, projected only into the containers that call the API server (join and
the agent; etcd gets none): the same files automounting would give, at the same path.
*/}}
{{- define "ema.apiAccessMount" -}}
- {name: kube-api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
{{- end -}}

{{/* Whole seconds of a duration written in minutes and seconds (45s, 1m30s); fails otherwise. */}}
{{- define "ema.seconds" -}}
{{- $d := toString .value -}}
{{- if or (eq $d "") (not (regexMatch "^([0-9]+m)?([0-9]+s)?$" $d)) -}}
{{- fail (printf "%s=%q: write whole minutes and seconds, like 45s or 1m30s" .name $d) -}}
{{- end -}}
{{- $m := regexFind "[0-9]+m" $d | trimSuffix "m" | default "0" | int -}}
{{- $s := regexFind "[0-9]+s" $d | trimSuffix "s" | default "0" | int -}}
{{- add (mul $m 60) $s -}}
{{- end -}}

{{/*
etcd's preStop hold must fit in the grace period: the kubelet subtracts the hook's time from it and
still gives the stop itself 2 s, so budget + etcd's own stop + 2 s; otherwise etcd would be killed
mid-stop, or the hold cut short. Kubernetes honours scheme HTTPS in a lifecycle httpGet from 1.26
(before, the hook always used http and failed against the HTTPS port: only an Event says so).
*/}}
{{- define "ema.checkHold" -}}
{{- if .Values.agent.removeSurplusMembers -}}
{{- $budget := include "ema.seconds" (dict "name" "agent.scaleDownBudget" "value" .Values.agent.scaleDownBudget) | int -}}
{{- $stop := int .Values.etcd.stopSeconds -}}
{{- $grace := int .Values.terminationGracePeriodSeconds -}}
{{- if gt (add $budget $stop 2) $grace -}}
{{- fail (printf "terminationGracePeriodSeconds=%d does not fit etcd's hold: agent.scaleDownBudget %ds + etcd.stopSeconds %ds + the kubelet's minimum 2s = %ds; raise it or shorten the budget" $grace $budget $stop (add $budget $stop 2)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Generated TLS: an enabled part whose Secret is not named gets certificates that join issues at
every Pod start from the cluster's CA, kept in the Secret <release>-ca. join creates that Secret
once (create-only) when it finds none, so no render of the chart (helm template, Argo CD) ever
makes a CA, and every member uses the same one.
*/}}
{{- define "ema.generatedPeer" -}}
{{- if and (eq .Values.mode "cluster") .Values.tls.peer.enabled (not .Values.tls.peer.secret) }}true{{ end -}}
{{- end -}}

{{- define "ema.generatedClient" -}}
{{- if and (eq .Values.mode "cluster") .Values.tls.client.enabled -}}
{{- if ne (empty .Values.tls.client.serverSecret) (empty .Values.tls.client.agentSecret) -}}
{{- fail "tls.client.serverSecret and tls.client.agentSecret are named together, or both left empty (generated)" -}}
{{- end -}}
{{- if not .Values.tls.client.serverSecret }}true{{ end -}}
{{- end -}}
{{- end -}}

{{- define "ema.generatedTls" -}}
{{- if or (include "ema.generatedPeer" .) (include "ema.generatedClient" .) }}true{{ end -}}
{{- end -}}

{{- define "ema.caSecret" -}}
{{- printf "%s-ca" (include "ema.fullname" .) -}}
{{- end -}}

{{- define "ema.clientTlsSecret" -}}
{{- printf "%s-client-tls" (include "ema.fullname" .) -}}
{{- end -}}

{{/* Where etcd reads its client port's and its peer port's certificates. */}}
{{- define "ema.serverTlsDir" -}}
{{- if include "ema.generatedClient" . }}/etc/etcd/tls-generated/server{{ else }}/etc/etcd/tls/server{{ end -}}
{{- end -}}

{{- define "ema.peerTlsDir" -}}
{{- if include "ema.generatedPeer" . }}/etc/etcd/tls-generated/peer{{ else }}/etc/etcd/tls/peer{{ end -}}
{{- end -}}

{{/*
Peer URLs are stored in etcd: an upgrade that changes their scheme would leave each restarted
member unreachable at the address the others hold. Refused by name; docs/kubernetes.md says how to
keep a release plain or move it to TLS. (helm template and Argo CD cannot look; join refuses too.)
*/}}
{{- define "ema.checkPeerScheme" -}}
{{- if .Release.IsUpgrade -}}
{{- $sts := lookup "apps/v1" "StatefulSet" .Release.Namespace (include "ema.fullname" .) -}}
{{- if $sts -}}
{{- range $c := $sts.spec.template.spec.initContainers -}}
{{- if eq $c.name "join" -}}
{{- range $e := $c.env -}}
{{- if and (eq $e.name "ETCD_MEMBER_AGENT_PEER_URLS") (not (hasPrefix (printf "%s://" (include "ema.peerScheme" $)) $e.value)) -}}
{{- fail (printf "tls.peer.enabled=%v would change this release's peer URLs (now %s), which etcd keeps in its member list: keep tls.peer.enabled=%v (see Upgrading the chart in docs/kubernetes.md)" $.Values.tls.peer.enabled $e.value (not $.Values.tls.peer.enabled)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The objects' name: fullnameOverride, else the release name when it
names the job already, else <release>-hap-reconciler. */}}
{{- define "hap-reconciler.fullname" -}}
{{- if .Values.hapReconciler.fullnameOverride -}}
{{- .Values.hapReconciler.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else if contains "hap-reconciler" .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-hap-reconciler" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hap-reconciler.selectorLabels" -}}
app.kubernetes.io/name: hap-reconciler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hap-reconciler.labels" -}}
{{ include "hap-reconciler.selectorLabels" . }}
app.kubernetes.io/component: reconciler
app.kubernetes.io/part-of: kyma-environment-broker
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ include "hap-reconciler.tag" . | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Gardener project namespace: KEB's APP_GARDENER_PROJECT is the
project's name, its namespace is garden-<project>. No default: a job run
against a project nobody named would reconcile the wrong pool. */}}
{{- define "hap-reconciler.gardenerNamespace" -}}
{{- include "hap-reconciler.kebValues" . -}}
{{- if .Values.hapReconciler.gardener.namespace -}}
{{- .Values.hapReconciler.gardener.namespace -}}
{{- else -}}
{{- printf "garden-%s" (required "gardener.project is not set: install with the values file KEB is deployed with on this landscape (its gardener.project names the Gardener project), or set hapReconciler.gardener.namespace" .Values.gardener.project) -}}
{{- end -}}
{{- end -}}

{{/* Where KEB's keys (gardener, hap) are read from: the top level, as in
KEB's own values.yaml, or a subchart key when the file is a wrapper chart's
(KEB's chart as a dependency: keb.gardener, keb.hap; global stays at the
top, as Helm shares globals). Lifts them to the top level, where every
template reads them, and KEB's imagePullSecret with them when the subchart
key sets it; idempotent, so each template includes it first.
hapReconciler.kebValuesKey names the key; empty, the one top-level map
holding a gardener.project or a hap.multiHyperscalerAccount/hap.rule is used
when the top level has no gardener.project, and anything ambiguous is
refused: silently running on the chart's defaults is what this prevents. */}}
{{- define "hap-reconciler.kebValues" -}}
{{- $v := .Values -}}
{{- if not (hasKey $v.hapReconciler "kebValuesFrom") -}}
{{- $found := list -}}
{{- range $k, $sub := $v -}}
{{- if and (not (has $k (list "global" "gardener" "hap" "hapReconciler"))) (kindIs "map" $sub) -}}
{{- $g := get $sub "gardener" | default dict -}}
{{- $h := get $sub "hap" | default dict -}}
{{- if or (and (kindIs "map" $g) (hasKey $g "project")) (and (kindIs "map" $h) (or (hasKey $h "multiHyperscalerAccount") (hasKey $h "rule"))) -}}
{{- $found = append $found $k -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $key := $v.hapReconciler.kebValuesKey -}}
{{- if and (not $key) $found -}}
{{- if and (eq (len $found) 1) (not $v.gardener.project) -}}
{{- $key = first $found -}}
{{- else -}}
{{- fail (printf "the values nest KEB's keys (gardener, hap) under %s as well as or instead of the top level: set hapReconciler.kebValuesKey to the key that holds KEB's values (a wrapper chart's subchart key), or pass KEB's own values file" (join ", " $found)) -}}
{{- end -}}
{{- end -}}
{{- if $key -}}
{{- $sub := get $v $key -}}
{{- if not (kindIs "map" $sub) -}}
{{- fail (printf "hapReconciler.kebValuesKey: %q holds no map of KEB's values" $key) -}}
{{- end -}}
{{- range $name := list "gardener" "hap" -}}
{{- $_ := set $v $name (mergeOverwrite (deepCopy (get $v $name | default dict)) (get $sub $name | default dict)) -}}
{{- end -}}
{{- with get $sub "imagePullSecret" -}}
{{- $_ := set $v "imagePullSecret" . -}}
{{- end -}}
{{- $_ := set $v.hapReconciler "kebValuesFrom" $key -}}
{{- else -}}
{{- $_ := set $v.hapReconciler "kebValuesFrom" "" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount the pods run as: KEB's with workload identity (the
Kubernetes account bound to the database's cloud identity, which KEB's jobs
and migrator run as), else the job's own. */}}
{{- define "hap-reconciler.serviceAccountName" -}}
{{- if .Values.global.database.cloudsqlproxy.workloadIdentity.enabled -}}
{{- required "global.kyma_environment_broker.serviceAccountName: KEB's ServiceAccount, which workload identity binds to the database's identity" .Values.global.kyma_environment_broker.serviceAccountName -}}
{{- else -}}
{{- include "hap-reconciler.fullname" . -}}
{{- end -}}
{{- end -}}

{{/* Pod labels and annotations every pod of the chart carries: no istio
sidecar (it would outlive a Job's container and keep the pod from
completing; KEB's migrator opts out the same way), or KEB's ambient labels
when KEB's chart runs ambient (global.istio.ambient.enabled). */}}
{{- define "hap-reconciler.meshLabels" -}}
{{- if (((.Values.global).istio).ambient).enabled }}
istio.io/dataplane-mode: ambient
sidecar.istio.io/inject: "false"
{{- end }}
{{- end -}}

{{- define "hap-reconciler.meshAnnotations" -}}
sidecar.istio.io/inject: "false"
{{- end -}}

{{/* Scheduling knobs for every pod of the chart. */}}
{{- define "hap-reconciler.scheduling" -}}
{{- $v := .Values.hapReconciler -}}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}

{{/* The image's version: global.images.hap_reconciler.version, where KEB's
release automation bumps the version of each of KEB's images
(global.images.<name>.version), else hapReconciler.image.tag, else the
chart's appVersion. Both set is refused: one would silently win. */}}
{{- define "hap-reconciler.tag" -}}
{{- $version := toString ((((.Values.global).images).hap_reconciler).version | default "") -}}
{{- $tag := toString (.Values.hapReconciler.image.tag | default "") -}}
{{- if and $version $tag -}}
{{- fail (printf "global.images.hap_reconciler.version %q and hapReconciler.image.tag %q are both set: set the version in global.images.hap_reconciler.version alone, as KEB's release automation does" $version $tag) -}}
{{- end -}}
{{- $version | default $tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* The image: hapReconciler.image.repository when set, else
hap-reconciler in the registry KEB's images come from, named as KEB's
templates name theirs: "<global.images.container_registry.path>/<dir>hap-reconciler"
with dir global.images.hap_reconciler.dir; Kyma's production registry when
KEB's values name none. */}}
{{- define "hap-reconciler.repository" -}}
{{- with .Values.hapReconciler.image.repository -}}
{{- . -}}
{{- else -}}
{{- $registry := (((.Values.global).images).container_registry).path | default "europe-docker.pkg.dev/kyma-project/prod" -}}
{{- $dir := (((.Values.global).images).hap_reconciler).dir | default "" -}}
{{- printf "%s/%shap-reconciler" (trimSuffix "/" $registry) $dir -}}
{{- end -}}
{{- end -}}

{{- define "hap-reconciler.image" -}}
{{- printf "%s:%s" (include "hap-reconciler.repository" .) (include "hap-reconciler.tag" .) -}}
{{- end -}}

{{/* Every pod's imagePullSecrets: hapReconciler.imagePullSecrets, and KEB's
imagePullSecret (a Secret's name, as KEB's pods list it) when set and not
listed already. Nothing when both are empty. */}}
{{- define "hap-reconciler.imagePullSecrets" -}}
{{- include "hap-reconciler.kebValues" . -}}
{{- $secrets := .Values.hapReconciler.imagePullSecrets | default list -}}
{{- with .Values.imagePullSecret -}}
{{- if not (has (dict "name" .) $secrets) -}}
{{- $secrets = append $secrets (dict "name" .) -}}
{{- end -}}
{{- end -}}
{{- with $secrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "hap-reconciler.inCluster" -}}
{{- $c := .Values.hapReconciler.gardener.credentials -}}
{{- if eq $c "inCluster" -}}true{{- else if ne $c "kubeconfig" -}}
{{- fail (printf "hapReconciler.gardener.credentials: %q, want kubeconfig or inCluster" $c) -}}
{{- end -}}
{{- end -}}

{{- define "hap-reconciler.proxy" -}}
{{- if .Values.global.database.cloudsqlproxy.enabled -}}true{{- end -}}
{{- end -}}

{{/* The root certificate is mounted as KEB mounts it: only for a managed
database (not embedded) reached without the proxy. */}}
{{- define "hap-reconciler.sslRootCert" -}}
{{- if and .Values.hapReconciler.database.sslRootCert.enabled (not (include "hap-reconciler.proxy" .)) (not ((.Values.global.database).embedded).enabled) -}}true{{- end -}}
{{- end -}}

{{/* A container's hardening: what the restricted Pod Security profile
demands, and a read-only root filesystem. */}}
{{- define "hap-reconciler.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- define "hap-reconciler.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* KEB's database variables (db.DSNFromEnv reads them as KEB does), from
KEB's Secret under KEB's key names; user and password from the Secret named
by the second argument under the keys of the third (the job's own Secret,
own key names, as KEB's analytics.database), or from KEB's Secret under
KEB's keys when that name is empty. Call with (list $ secretName keys),
keys having userSecretKey and passwordSecretKey. */}}
{{- define "hap-reconciler.databaseEnv" -}}
{{- $keys := index . 2 -}}
{{- $ := index . 0 -}}
{{- $db := $.Values.global.database.managedGCP -}}
{{- $keb := required "global.database.managedGCP.secretName: KEB's database Secret" $db.secretName -}}
{{- $creds := $keb -}}
{{- $userKey := $db.userNameSecretKey -}}
{{- $passwordKey := $db.passwordSecretKey -}}
{{- with (index . 1) -}}
{{- $creds = . -}}
{{- $userKey = required "the job's database Secret: userSecretKey" $keys.userSecretKey -}}
{{- $passwordKey = required "the job's database Secret: passwordSecretKey" $keys.passwordSecretKey -}}
{{- end -}}
- name: APP_DATABASE_HOST
  valueFrom: {secretKeyRef: {name: {{ $keb }}, key: {{ $db.hostSecretKey }}}}
- name: APP_DATABASE_PORT
  valueFrom: {secretKeyRef: {name: {{ $keb }}, key: {{ $db.portSecretKey }}}}
- name: APP_DATABASE_NAME
  valueFrom: {secretKeyRef: {name: {{ $keb }}, key: {{ $db.nameSecretKey }}}}
- name: APP_DATABASE_SSLMODE
  valueFrom: {secretKeyRef: {name: {{ $keb }}, key: {{ $db.sslModeSecretKey }}}}
- name: APP_DATABASE_USER
  valueFrom: {secretKeyRef: {name: {{ $creds }}, key: {{ $userKey }}}}
- name: APP_DATABASE_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $creds }}, key: {{ $passwordKey }}}}
{{- if include "hap-reconciler.sslRootCert" $ }}
- name: APP_DATABASE_SSLROOTCERT
  value: {{ printf "%s/%s" $.Values.hapReconciler.database.sslRootCert.mountPath $.Values.hapReconciler.database.sslRootCert.fileName | quote }}
{{- end }}
{{- end -}}

{{/* A value as KEB's deployment template writes it into a variable
("{{ .Values... }}"): the number or string as printed, "" when not set. */}}
{{- define "hap-reconciler.kebValue" -}}
{{- if kindIs "invalid" . -}}{{- quote "" -}}{{- else -}}{{- printf "%v" . | quote -}}{{- end -}}
{{- end -}}

{{/* KEB's multi-account variables, named and filled as KEB's deployment
(resources/keb/templates/deployment.yaml) sets them from the hap block:
the allowlist joined with commas, each number as written. KEB's chart names
the openstack and alicloud limits ..._LIMITS_OPENSTACK and ..._ALICLOUD,
which KEB's envconfig never reads; the job reads the variables exactly as
KEB does, so it ignores them too and warns at start (config/env.go). KEB
has no gdch limit: no variable. */}}
{{- define "hap-reconciler.hapEnv" -}}
{{- $m := .Values.hap.multiHyperscalerAccount | default dict -}}
{{- $limits := $m.limits | default dict -}}
- name: APP_HAP_MULTI_HYPERSCALER_ACCOUNT_ALLOWED_GLOBAL_ACCOUNTS
  value: {{ join "," ($m.allowedGlobalAccounts | default list) | quote }}
- name: APP_HAP_MULTI_HYPERSCALER_ACCOUNT_MIN_BINDINGS_FOR_GUARD
  value: {{ include "hap-reconciler.kebValue" $m.minBindingsForGuard }}
{{- range $field := list "default" "aws" "gcp" "azure" "openstack" "alicloud" }}
- name: APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_{{ upper $field }}
  value: {{ include "hap-reconciler.kebValue" (index $limits $field) }}
{{- end }}
{{- if .Values.hap.rule }}
- name: APP_HAP_RULE_FILE_PATH
  value: /etc/hap-reconciler/hapRule.yaml
{{- end }}
{{- end -}}

{{/* The cloud-sql-proxy as KEB runs it, as a native sidecar (an init
container that keeps running), so that a Job's pod completes when the job's
container exits. */}}
{{- define "hap-reconciler.proxyContainer" -}}
{{- if include "hap-reconciler.proxy" . -}}
- name: cloudsql-proxy
  image: {{ printf "%s:%s" .Values.global.images.cloudsql_proxy.repository .Values.global.images.cloudsql_proxy.tag | quote }}
  restartPolicy: Always
  command:
    - /cloud-sql-proxy
    - {{ required "global.database.managedGCP.instanceConnectionName: the Cloud SQL instance the proxy connects to" .Values.global.database.managedGCP.instanceConnectionName | quote }}
    - --private-ip
    - --exit-zero-on-sigterm
    {{- if not .Values.global.database.cloudsqlproxy.workloadIdentity.enabled }}
    - --credentials-file=/secrets/cloudsql-instance-credentials/credentials.json
  volumeMounts:
    - {name: cloudsql-instance-credentials, mountPath: /secrets/cloudsql-instance-credentials, readOnly: true}
    {{- end }}
  resources:
    {{- toYaml .Values.hapReconciler.cloudsqlProxy.resources | nindent 4 }}
  securityContext:
    {{- include "hap-reconciler.containerSecurityContext" . | nindent 4 }}
{{- end }}
{{- end -}}

{{- define "hap-reconciler.proxyVolumes" -}}
{{- if and (include "hap-reconciler.proxy" .) (not .Values.global.database.cloudsqlproxy.workloadIdentity.enabled) }}
- name: cloudsql-instance-credentials
  secret:
    secretName: {{ .Values.hapReconciler.cloudsqlProxy.credentialsSecretName }}
{{- end }}
{{- if include "hap-reconciler.sslRootCert" . }}
- name: cloudsql-sslrootcert
  secret:
    secretName: {{ .Values.global.database.managedGCP.secretName }}
    items:
      - {key: {{ .Values.hapReconciler.database.sslRootCert.secretKey }}, path: {{ .Values.hapReconciler.database.sslRootCert.fileName }}}
    optional: true
{{- end }}
{{- end -}}

{{/* KEB's custom CA bundle (global.caBundle), as KEB's pods take it: the
ClusterTrustBundle global.caBundle.name projected as global.caBundle.file
over global.caBundle.mountPath (/etc/ssl/certs/ca-certificates.crt, where
Go reads the system roots), replacing the image's bundle for TLS to
Gardener, the database and the Pushgateway. */}}
{{- define "hap-reconciler.caBundleVolume" -}}
{{- with (.Values.global).caBundle }}{{ if .enabled }}
- name: {{ required "global.caBundle.name: the ClusterTrustBundle holding KEB's CA bundle" .name }}
  projected:
    sources:
      - clusterTrustBundle:
          name: {{ .name }}
          path: {{ required "global.caBundle.file: the bundle's file name" .file }}
{{- end }}{{ end }}
{{- end -}}

{{- define "hap-reconciler.caBundleMount" -}}
{{- with (.Values.global).caBundle }}{{ if .enabled }}
- {name: {{ .name }}, mountPath: {{ required "global.caBundle.mountPath: where the bundle replaces the image's" .mountPath }}, readOnly: true}
{{- end }}{{ end }}
{{- end -}}

{{- define "hap-reconciler.sslRootCertMount" -}}
{{- if include "hap-reconciler.sslRootCert" . -}}
- {name: cloudsql-sslrootcert, mountPath: {{ .Values.hapReconciler.database.sslRootCert.mountPath }}, readOnly: true}
{{- end }}
{{- end -}}

{{/* The job's config.yaml: its own keys and the release switches; hap
comes through KEB's variables, the namespace through --namespace. */}}
{{- define "hap-reconciler.config" -}}
{{- $cfg := deepCopy (.Values.hapReconciler.config | default dict) -}}
{{- range $key := list "hap" "namespace" "release" -}}
{{- if hasKey $cfg $key -}}
{{- fail (printf "hapReconciler.config.%s: set it through %s instead" $key (get (dict "hap" "the top-level hap block (KEB's)" "namespace" "gardener.project or hapReconciler.gardener.namespace" "release" "hapReconciler.release") $key)) -}}
{{- end -}}
{{- end -}}
{{- $r := .Values.hapReconciler.release -}}
{{- $_ := set $cfg "release" (dict "enabled" $r.enabled "mode" "dirty" "gracePeriod" $r.gracePeriod "maxPerRun" $r.maxPerRun "guardRatio" $r.guardRatio) -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The pod both workloads run: call with (dict "root" $ "args" list
"serve" bool). */}}
{{- define "hap-reconciler.podSpec" -}}
{{- $ := .root -}}
{{- $v := $.Values.hapReconciler -}}
serviceAccountName: {{ include "hap-reconciler.serviceAccountName" $ }}
{{- if not (include "hap-reconciler.inCluster" $) }}
# The kubeconfig carries the Gardener identity; the local token is of no use.
automountServiceAccountToken: false
{{- end }}
{{- if .serve }}
{{- if le (int $v.terminationGracePeriodSeconds) 45 }}
{{- fail (printf "hapReconciler.terminationGracePeriodSeconds: %v, want more than serve's 45 s shutdown grace" $v.terminationGracePeriodSeconds) }}
{{- end }}
terminationGracePeriodSeconds: {{ int $v.terminationGracePeriodSeconds }}
{{- end }}
{{- include "hap-reconciler.imagePullSecrets" $ }}
{{- include "hap-reconciler.scheduling" $ }}
securityContext:
  {{- include "hap-reconciler.podSecurityContext" $ | nindent 2 }}
{{- with (include "hap-reconciler.proxyContainer" $) }}
initContainers:
  {{- . | nindent 2 }}
{{- end }}
containers:
  - name: hap-reconciler
    image: {{ include "hap-reconciler.image" $ | quote }}
    imagePullPolicy: {{ $v.image.pullPolicy }}
    args:
      {{- toYaml .args | nindent 6 }}
    {{- if .serve }}
    ports:
      - name: http-metrics
        containerPort: {{ $v.metrics.port }}
    livenessProbe:
      httpGet: {path: /healthz, port: http-metrics}
      periodSeconds: 20
      failureThreshold: 3
    readinessProbe:
      httpGet: {path: /readyz, port: http-metrics}
      periodSeconds: 10
    {{- end }}
    env:
      {{- include "hap-reconciler.databaseEnv" (list $ $v.database.credentialsSecretName $v.database) | nindent 6 }}
      {{- include "hap-reconciler.hapEnv" $ | nindent 6 }}
      - name: GOMEMLIMIT
        value: {{ $v.goMemLimit | quote }}
    resources:
      {{- toYaml $v.resources | nindent 6 }}
    securityContext:
      {{- include "hap-reconciler.containerSecurityContext" $ | nindent 6 }}
    volumeMounts:
      - {name: config, mountPath: /etc/hap-reconciler, readOnly: true}
      - {name: tmp, mountPath: /tmp}
      {{- if not (include "hap-reconciler.inCluster" $) }}
      - {name: gardener-kubeconfig, mountPath: {{ dir $.Values.gardener.kubeconfigPath }}, readOnly: true}
      {{- end }}
      {{- with (include "hap-reconciler.sslRootCertMount" $) }}{{ . | nindent 6 }}{{ end }}
      {{- with (include "hap-reconciler.caBundleMount" $ | trim) }}{{ . | nindent 6 }}{{ end }}
volumes:
  - name: config
    configMap:
      name: {{ include "hap-reconciler.fullname" $ }}
  - name: tmp
    emptyDir: {sizeLimit: 16Mi}
  {{- if not (include "hap-reconciler.inCluster" $) }}
  - name: gardener-kubeconfig
    secret:
      secretName: {{ $.Values.gardener.secretName }}
  {{- end }}
  {{- with (include "hap-reconciler.proxyVolumes" $ | trim) }}{{ . | nindent 2 }}{{ end }}
  {{- with (include "hap-reconciler.caBundleVolume" $ | trim) }}{{ . | nindent 2 }}{{ end }}
{{- end -}}

{{/*
The alerts' rule file, files/alerts.yaml, with each runbook_url at the
docs of the deployed version: the file links to main, where the sections
are written, and an SRE following an alert must read the procedure of the
release that fired it, a section that main may have changed or renamed
since. The release tag is the chart's appVersion (the release workflow
refuses a tag that differs). The rest of the file is not templated.
*/}}
{{- define "hap-reconciler.alertRules" -}}
{{- $main := "https://github.com/kyma-project/hap-reconciler/blob/main/docs/runbook.md#" -}}
{{- $rules := .Files.Get "files/alerts.yaml" -}}
{{- if not (contains $main $rules) -}}
{{- fail (printf "files/alerts.yaml: no runbook_url starts %s, which the chart rewrites to the release's tag" $main) -}}
{{- end -}}
{{- replace $main (printf "https://github.com/kyma-project/hap-reconciler/blob/%s/docs/runbook.md#" .Chart.AppVersion) $rules -}}
{{- end -}}

{{/* The arguments every command shares. */}}
{{- define "hap-reconciler.commonArgs" -}}
{{- $args := list "--config=/etc/hap-reconciler/config.yaml" (printf "--namespace=%s" (include "hap-reconciler.gardenerNamespace" .)) (printf "--log-level=%s" .Values.hapReconciler.logLevel) -}}
{{- if not (include "hap-reconciler.inCluster" .) -}}
{{- $args = append $args (printf "--kubeconfig=%s" .Values.gardener.kubeconfigPath) -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}

{{/*
The kind the alerts are rendered as: VMRule (the default, as KEB's
landscape runs VictoriaMetrics) or PrometheusRule, whichever is enabled;
ConfigMap, holding the same rule file, when the cluster (or helm template's
--api-versions) does not serve that kind, so the alerts never vanish
silently; "" when neither is enabled. Both enabled is refused.
*/}}
{{- define "hap-reconciler.alertsKind" -}}
{{- $v := .Values.hapReconciler -}}
{{- if and $v.vmRule.enabled $v.prometheusRule.enabled -}}
{{- fail "hapReconciler.vmRule.enabled and hapReconciler.prometheusRule.enabled are both true: enable one (every alert would be evaluated twice, and VictoriaMetrics' operator converts a PrometheusRule into a VMRule of the same name)" -}}
{{- else if $v.vmRule.enabled -}}
{{- if .Capabilities.APIVersions.Has "operator.victoriametrics.com/v1beta1/VMRule" }}VMRule{{ else }}ConfigMap{{ end -}}
{{- else if $v.prometheusRule.enabled -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule" }}PrometheusRule{{ else }}ConfigMap{{ end -}}
{{- end -}}
{{- end -}}

{{/* The API the enabled rule kind needs, for NOTES.txt. */}}
{{- define "hap-reconciler.alertsAPI" -}}
{{- if .Values.hapReconciler.vmRule.enabled }}operator.victoriametrics.com/v1beta1/VMRule{{ else }}monitoring.coreos.com/v1/PrometheusRule{{ end -}}
{{- end -}}

{{/*
"true" when the migrate hook reverts (hapReconciler.migrations.direction
down) instead of applying, for the Job and NOTES.txt. Unset counts as up:
helm upgrade --reuse-values from a release whose chart predates the value
takes that chart's defaults.
*/}}
{{- define "hap-reconciler.migrateDown" -}}
{{- eq (toString (.Values.hapReconciler.migrations.direction | default "up")) "down" -}}
{{- end -}}

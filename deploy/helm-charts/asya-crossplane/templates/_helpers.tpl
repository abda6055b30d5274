{{/* The labels every object of the release carries. */}}
{{- define "asya-crossplane.labels" -}}
app.kubernetes.io/name: asya-crossplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The AWS account id as a string: --set parses 123456789012 as a number. */}}
{{- define "asya-crossplane.accountId" -}}
{{- if kindIs "string" .Values.awsAccountId -}}
{{ .Values.awsAccountId }}
{{- else -}}
{{ .Values.awsAccountId | int64 | toString }}
{{- end -}}
{{- end -}}

{{/* The actor namespaces: actorNamespace and actorNamespaces, once each, in order. */}}
{{- define "asya-crossplane.namespaces" -}}
{{- $all := list -}}
{{- with .Values.actorNamespace }}{{ $all = append $all . }}{{ end -}}
{{- range .Values.actorNamespaces }}{{ $all = append $all . }}{{ end -}}
{{- $all | uniq | toJson -}}
{{- end -}}

{{/* The manager's image. */}}
{{- define "apimsync.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The manager's ServiceAccount as a subject. */}}
{{- define "apimsync.subject" -}}
- kind: ServiceAccount
  name: apimsync-manager
  namespace: {{ .Release.Namespace }}
{{- end -}}

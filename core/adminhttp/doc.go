// Package adminhttp serves a process's operator HTTP listener: /metrics
// from the collectors registered with it, /healthz and /readyz composed of
// the checks registered with it, the runtime profiles when asked, and the
// sections (paths) each server of the process adds.
//
// A NameServer registers its counters, its readiness and its pages; a
// controller in the same process registers its own beside them ("has a
// raft leader" as one more readiness check), on the same listener.
package adminhttp

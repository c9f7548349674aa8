package mcpserver

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sandcall/sandcall/bindings"
)

// Metrics counts tool calls and runs for Prometheus. It is a
// bindings.Observer (set it as BrokerConfig.Observer) and an http.Handler
// of the Prometheus text format (set it as Config.Metrics). It uses its own
// registry, so embedding sandcall adds nothing to the process's default one.
//
// Series:
//
//	sandcall_tool_calls_total{tool,caller,outcome}   outcome: ok, failed, denied
//	sandcall_tool_call_duration_seconds{tool}        histogram
//	sandcall_runs_total{outcome,code}                outcome: ok, error; code: the error code
//	sandcall_run_duration_seconds                    histogram
//
// Label values come from the catalog and the closed set of error codes: a
// tool name the catalog does not hold is counted as "(unknown)".
type Metrics struct {
	reg     *prometheus.Registry
	calls   *prometheus.CounterVec
	callDur *prometheus.HistogramVec
	runs    *prometheus.CounterVec
	runDur  prometheus.Histogram
	handler http.Handler
}

var _ bindings.Observer = (*Metrics)(nil)

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandcall_tool_calls_total",
		Help: "Tool calls attempted, by tool, caller (direct or code) and outcome (ok, failed, denied)."},
		[]string{"tool", "caller", "outcome"})
	m.callDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandcall_tool_call_duration_seconds",
		Help:    "Duration of tool calls through the broker, authorization and approval included.",
		Buckets: []float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 30}}, []string{"tool"})
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandcall_runs_total",
		Help: "Programs run, by outcome (ok, error) and error code."}, []string{"outcome", "code"})
	m.runDur = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sandcall_run_duration_seconds",
		Help:    "Duration of program runs, waiting for a worker included.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}})
	m.reg.MustRegister(m.calls, m.callDur, m.runs, m.runDur)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// ObserveCall implements bindings.Observer.
func (m *Metrics) ObserveCall(tool, caller, outcome string, d time.Duration) {
	m.calls.WithLabelValues(tool, caller, outcome).Inc()
	m.callDur.WithLabelValues(tool).Observe(d.Seconds())
}

// ObserveRun implements bindings.Observer.
func (m *Metrics) ObserveRun(outcome, code string, d time.Duration) {
	m.runs.WithLabelValues(outcome, code).Inc()
	m.runDur.Observe(d.Seconds())
}

// ServeHTTP serves the metrics in the Prometheus text format.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

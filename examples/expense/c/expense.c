// The expense workload (examples/expense/program.js) in C for sandcall's
// WebAssembly engine: who in engineering went over their Q3 travel budget?
// Its result is expense.ReferenceSummary, byte for byte, after 56 tool calls:
// the team, the budget of each distinct level (in parallel), and each
// member's Q3 expenses (50, in parallel). It imports only the sandcall host
// module (bindings/abi.md) and exports run; no WASI.
//
// Built with Debian 12's clang 14, lld and wasi-libc (apt-get install clang
// lld wasi-libc libclang-rt-14-dev-wasm32), from the repository's root:
//
//	clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry -Wl,--strip-all -o examples/expense/c/expense.wasm examples/expense/c/expense.c
//
// The committed expense.wasm is that build (TestModuleCMatchesSource
// rebuilds it and compares, where clang and wasi-libc are installed).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SANDCALL(name) __attribute__((import_module("sandcall"), import_name(name)))

SANDCALL("call_async") int sc_call_async(const char *name, int name_len, const char *args, int args_len);
SANDCALL("wait") int sc_wait(int handle);
SANDCALL("result_len") int sc_result_len(int handle);
SANDCALL("result_read") int sc_result_read(int handle, char *buf, int buf_len);
SANDCALL("set_result") int sc_set_result(const char *json, int len);
SANDCALL("log") void sc_log(const char *entry, int len);

// fail logs why the program gives up and ends the run (E_GUEST_ERROR).
static void fail(const char *why) {
	sc_log(why, (int)strlen(why));
	__builtin_trap();
}

// start starts a call of tool with args (JSON) and returns its handle.
static int start(const char *tool, const char *args, int args_len) {
	int h = sc_call_async(tool, (int)strlen(tool), args, args_len);
	if (h <= 0) fail("call_async failed");
	return h;
}

// collect waits for the call behind h and returns its result (JSON, NUL-
// terminated, to free); a tool error ends the run with the error logged.
static char *collect(int h) {
	int status = sc_wait(h);
	int n = sc_result_len(h);
	if (status < 0 || n < 0) fail("wait failed");
	char *buf = malloc((size_t)n + 1);
	if (!buf) fail("out of memory");
	if (sc_result_read(h, buf, n) != n) fail("result_read failed");
	buf[n] = 0;
	if (status == 1) fail(buf); // the tool's error, as JSON
	return buf;
}

// A cursor over compact JSON as the tools return it.
typedef struct {
	const char *p;
} cur;

static void ws(cur *c) {
	while (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r') c->p++;
}

static int eat(cur *c, char ch) {
	ws(c);
	if (*c->p != ch) return 0;
	c->p++;
	return 1;
}

// str reads a string and returns its raw contents (escapes left as they
// are, so they can be written back into JSON): s, n.
static void str(cur *c, const char **s, int *n) {
	if (!eat(c, '"')) fail("expected a string");
	*s = c->p;
	while (*c->p && *c->p != '"') c->p += (*c->p == '\\' && c->p[1]) ? 2 : 1;
	*n = (int)(c->p - *s);
	if (!eat(c, '"')) fail("unterminated string");
}

static double num(cur *c) {
	ws(c);
	char *end;
	double v = strtod(c->p, &end);
	if (end == c->p) fail("expected a number");
	c->p = end;
	return v;
}

// skip steps over one value of any kind.
static void skip(cur *c) {
	ws(c);
	const char *s;
	int n, depth = 0;
	switch (*c->p) {
	case '"':
		str(c, &s, &n);
		return;
	case '{':
	case '[':
		do {
			if (*c->p == '"') {
				str(c, &s, &n);
				continue;
			}
			if (*c->p == '{' || *c->p == '[') depth++;
			if (*c->p == '}' || *c->p == ']') depth--;
			if (!*c->p) fail("unterminated value");
			c->p++;
		} while (depth > 0);
		return;
	default: // a number, true, false or null
		while (*c->p && *c->p != ',' && *c->p != '}' && *c->p != ']') c->p++;
	}
}

// key reads an object's next key and its colon; 0 at the object's end.
static int key(cur *c, const char **k, int *n) {
	ws(c);
	if (*c->p == '}') {
		c->p++;
		return 0;
	}
	eat(c, ',');
	str(c, k, n);
	if (!eat(c, ':')) fail("expected a colon");
	return 1;
}

// next reads the comma or bracket before an array's next element; 0 at the
// array's end.
static int next(cur *c, int first) {
	ws(c);
	if (*c->p == ']') {
		c->p++;
		return 0;
	}
	if (!first && !eat(c, ',')) fail("expected a comma");
	return 1;
}

static int is(const char *s, int n, const char *lit) { return (int)strlen(lit) == n && memcmp(s, lit, (size_t)n) == 0; }

// A raw string: its bytes inside the JSON it came from.
typedef struct {
	const char *s;
	int n;
} raw;

static int same(raw a, raw b) { return a.n == b.n && memcmp(a.s, b.s, (size_t)a.n) == 0; }

#define MAX_TEAM 256
#define MAX_LEVELS 16

typedef struct {
	raw id, name, level;
} member;

// js_round is ECMAScript Math.round: ties toward +Infinity, -0 for x in
// [-0.5, -0].
static double js_round(double x) {
	if (isnan(x) || isinf(x)) return x;
	double t = trunc(x), d = x - t;
	if (x >= 0 && d >= 0.5) t += 1;
	else if (x < 0 && d < -0.5) t -= 1;
	if (t == 0 && (x < 0 || signbit(x))) return -0.0;
	return t;
}

static double round2(double x) { return js_round(x * 100) / 100; }

// number writes x as JavaScript's String(x) does, for the values of this
// workload (0, or 1e-6 <= |x| < 1e21): the fewest decimals that read back as
// x.
static void number(char *buf, size_t size, double x) {
	if (x == 0) {
		snprintf(buf, size, "0");
		return;
	}
	for (int d = 0; d <= 17; d++) {
		snprintf(buf, size, "%.*f", d, x);
		if (strtod(buf, NULL) == x) return;
	}
}

// out is the result being written.
static char *out;
static size_t out_len, out_cap;

static void put(const char *s, size_t n) {
	if (out_len + n > out_cap) {
		out_cap = (out_len + n) * 2;
		out = realloc(out, out_cap);
		if (!out) fail("out of memory");
	}
	memcpy(out + out_len, s, n);
	out_len += n;
}

static void puts_(const char *s) { put(s, strlen(s)); }

static void put_raw(raw r) { put(r.s, (size_t)r.n); }

static void put_num(double x) {
	char b[64];
	number(b, sizeof b, x);
	puts_(b);
}

__attribute__((export_name("run"))) int run(void) {
	static const char team_args[] = "{\"department\":\"engineering\"}";
	char *team_json = collect(start("get_team_members", team_args, (int)sizeof team_args - 1));
	static member team[MAX_TEAM];
	int nteam = 0;
	cur c = {team_json};
	if (!eat(&c, '[')) fail("expected the team as an array");
	for (int first = 1; next(&c, first); first = 0) {
		if (nteam == MAX_TEAM) fail("too many members");
		member *m = &team[nteam++];
		const char *k;
		int kn;
		if (!eat(&c, '{')) fail("expected a member object");
		while (key(&c, &k, &kn)) {
			raw *f = is(k, kn, "id") ? &m->id : is(k, kn, "name") ? &m->name : is(k, kn, "level") ? &m->level : NULL;
			if (f) str(&c, &f->s, &f->n);
			else skip(&c);
		}
	}

	// The distinct levels, in order of first appearance, and their budgets.
	raw levels[MAX_LEVELS];
	int nlevels = 0;
	for (int i = 0; i < nteam; i++) {
		int seen = 0;
		for (int j = 0; j < nlevels && !seen; j++) seen = same(levels[j], team[i].level);
		if (!seen) {
			if (nlevels == MAX_LEVELS) fail("too many levels");
			levels[nlevels++] = team[i].level;
		}
	}
	char args[256];
	int handles[MAX_TEAM];
	for (int i = 0; i < nlevels; i++) {
		int n = snprintf(args, sizeof args, "{\"level\":\"%.*s\"}", levels[i].n, levels[i].s);
		handles[i] = start("get_budget_by_level", args, n);
	}
	double limits[MAX_LEVELS];
	for (int i = 0; i < nlevels; i++) {
		char *b = collect(handles[i]);
		cur bc = {b};
		const char *k;
		int kn, found = 0;
		if (!eat(&bc, '{')) fail("expected a budget object");
		while (key(&bc, &k, &kn)) {
			if (is(k, kn, "travel_limit")) limits[i] = num(&bc), found = 1;
			else skip(&bc);
		}
		if (!found) fail("a budget without travel_limit");
		free(b);
	}

	// Each member's Q3 expenses, in parallel; their travel totals.
	for (int i = 0; i < nteam; i++) {
		int n = snprintf(args, sizeof args, "{\"member_id\":\"%.*s\",\"quarter\":\"Q3\"}", team[i].id.n, team[i].id.s);
		handles[i] = start("get_expenses", args, n);
	}
	puts_("[");
	int rows = 0;
	for (int i = 0; i < nteam; i++) {
		char *e = collect(handles[i]);
		cur ec = {e};
		double travel = 0;
		if (!eat(&ec, '[')) fail("expected the expenses as an array");
		for (int first = 1; next(&ec, first); first = 0) {
			const char *k;
			int kn, is_travel = 0;
			double amount = 0;
			if (!eat(&ec, '{')) fail("expected an expense object");
			while (key(&ec, &k, &kn)) {
				if (is(k, kn, "category")) {
					raw cat;
					str(&ec, &cat.s, &cat.n);
					is_travel = is(cat.s, cat.n, "travel");
				} else if (is(k, kn, "amount")) {
					amount = num(&ec);
				} else {
					skip(&ec);
				}
			}
			if (is_travel) travel += amount;
		}
		free(e);
		double limit = 0;
		for (int j = 0; j < nlevels; j++)
			if (same(levels[j], team[i].level)) limit = limits[j];
		if (travel > limit) {
			puts_(rows++ ? ",{\"id\":\"" : "{\"id\":\"");
			put_raw(team[i].id);
			puts_("\",\"name\":\"");
			put_raw(team[i].name);
			puts_("\",\"level\":\"");
			put_raw(team[i].level);
			puts_("\",\"travel_total\":");
			put_num(round2(travel));
			puts_(",\"travel_limit\":");
			put_num(limit);
			puts_(",\"over_by\":");
			put_num(round2(travel - limit));
			puts_("}");
		}
	}
	puts_("]");
	if (sc_set_result(out, (int)out_len) != 0) fail("set_result failed");
	return 0;
}

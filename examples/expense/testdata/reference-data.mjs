// The standard expense workload's specification of the demo data, copied verbatim
// (only this header added; the original's sha256 is
// 441be211ecc46cfc78dbbda0a1b74c6c88684712aa278e6ca3695c3f17db35ce), for the node
// cross-check in expense_test.go.

// Reference generator for the expense-check demo data (a specification, in JS).
// The Go demo tools must produce byte-identical JSON for the same inputs.
// Check: sha256 of the compact JSON results, as described in README.md.
//
//
// PRNG: mulberry32 seeded with FNV-1a(ASCII string). Only ASCII data is produced
// so UTF-16 (JS) and UTF-8 (Go) byte counts agree and no JSON escaping differs.

export const DEPARTMENT = 'engineering';
export const QUARTER = 'Q3';
export const TEAM_SIZE = 50;
export const ROWS_PER_MEMBER = 40;

export function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Dennis', 'Margaret',
  'Linus', 'Radia', 'John', 'Shafi', 'Leslie', 'Tony', 'Niklaus', 'Hedy', 'Katherine', 'Guido'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Ritchie', 'Hamilton',
  'Torvalds', 'Perlman', 'McCarthy', 'Goldwasser', 'Lamport', 'Hoare', 'Wirth', 'Lamarr', 'Johnson', 'Rossum'];
const CATEGORIES = ['travel', 'travel', 'travel', 'meals', 'meals', 'software', 'equipment', 'training', 'office'];
const VENDORS = ['Acme Travel', 'Globex Air', 'Initech Hotels', 'Umbrella Rail', 'Stark Cabs', 'Wayne Catering',
  'Hooli Cloud', 'Vandelay Supply', 'Soylent Foods', 'Tyrell Learning'];
const PURPOSES = ['customer onsite visit', 'quarterly planning offsite', 'conference attendance', 'team dinner',
  'license renewal', 'replacement laptop dock', 'certification course', 'recruiting trip', 'partner workshop',
  'incident response travel'];
const PROJECTS = ['Apollo', 'Borealis', 'Cobalt', 'Delta', 'Ember', 'Falcon', 'Granite', 'Helios'];
export const BUDGETS = { L1: 2500, L2: 3500, L3: 5000, L4: 6500, L5: 8000 };

const pad2 = (n) => (n < 10 ? '0' + n : '' + n);
const pad3 = (n) => (n < 10 ? '00' + n : n < 100 ? '0' + n : '' + n);

export function genTeam(department) {
  const r = mulberry32(fnv1a('team|' + department));
  const prefix = department.slice(0, 3).toUpperCase();
  const out = [];
  for (let i = 0; i < TEAM_SIZE; i++) {
    const first = FIRST[Math.floor(r() * FIRST.length)];
    const last = LAST[Math.floor(r() * LAST.length)];
    const level = 'L' + (1 + Math.floor(r() * 5));
    out.push({ id: prefix + '-' + pad3(i + 1), name: first + ' ' + last, level });
  }
  return out;
}

export function genBudget(level) {
  return { level, travel_limit: BUDGETS[level] ?? 0, currency: 'USD' };
}

export function genExpenses(memberId, quarter) {
  const r = mulberry32(fnv1a('exp|' + memberId + '|' + quarter));
  const q = Number(quarter.slice(1)) || 1;
  const firstMonth = (q - 1) * 3 + 1;
  const out = [];
  for (let i = 0; i < ROWS_PER_MEMBER; i++) {
    const month = firstMonth + Math.floor(r() * 3);
    const day = 1 + Math.floor(r() * 28);
    const category = CATEGORIES[Math.floor(r() * CATEGORIES.length)];
    const base = category === 'travel' ? 40 + r() * 560 : 5 + r() * 295;
    const amount = Math.round(base * 100) / 100;
    const vendor = VENDORS[Math.floor(r() * VENDORS.length)];
    const purpose = PURPOSES[Math.floor(r() * PURPOSES.length)];
    const project = PROJECTS[Math.floor(r() * PROJECTS.length)];
    const receipt = 100000 + Math.floor(r() * 900000);
    let description = vendor + ': ' + purpose + ' for project ' + project + ', receipt #' + receipt;
    // pad/truncate to exactly 80 chars so row size is stable
    description = (description + ' - submitted via expense portal').slice(0, 80);
    out.push({ date: '2024-' + pad2(month) + '-' + pad2(day), category, amount, description });
  }
  return out;
}

// ---- host tools -----------------------------------------------------------
// Results are generated once and cached, so benchmark timings measure the
// sandbox + bridge + program, not the synthetic data generator.
const cache = new Map();
function cached(key, make) {
  let v = cache.get(key);
  if (v === undefined) { v = make(); cache.set(key, v); }
  return v;
}

export const syncTools = {
  get_team_members: (department) => cached('t|' + department, () => genTeam(department)),
  get_budget_by_level: (level) => cached('b|' + level, () => genBudget(level)),
  get_expenses: (memberId, quarter) => cached('e|' + memberId + '|' + quarter, () => genExpenses(memberId, quarter)),
  ping: (i) => i + 1,
};

// Async flavour (what an MCP/HTTP-backed tool looks like to the sandbox).
export const asyncTools = Object.fromEntries(
  Object.entries(syncTools).map(([k, f]) => [k, async (...a) => f(...a)]));

export const TOOL_NAMES = Object.keys(syncTools);

// Pre-warm cache for the main workload so first-run timings don't include generation.
export function warmCache() {
  const team = syncTools.get_team_members(DEPARTMENT);
  for (const l of Object.keys(BUDGETS)) syncTools.get_budget_by_level(l);
  for (const m of team) syncTools.get_expenses(m.id, QUARTER);
}

// Reference answer computed directly in the host (no sandbox).
export function referenceSummary() {
  const team = syncTools.get_team_members(DEPARTMENT);
  const levels = [...new Set(team.map((m) => m.level))];
  const budgets = {};
  for (const l of levels) budgets[l] = syncTools.get_budget_by_level(l);
  const over = [];
  for (const m of team) {
    let travel = 0;
    for (const e of syncTools.get_expenses(m.id, QUARTER)) if (e.category === 'travel') travel += e.amount;
    const limit = budgets[m.level].travel_limit;
    if (travel > limit) over.push({ id: m.id, name: m.name, level: m.level,
      travel_total: Math.round(travel * 100) / 100, travel_limit: limit,
      over_by: Math.round((travel - limit) * 100) / 100 });
  }
  return JSON.stringify(over);
}

// Market report: for each ticker of the watchlist (input), the last price and
// move, the one-year return and annualized volatility, and the top headline;
// then the peers of the three biggest movers. One compact result.
// The body of an async function: `await` works at top level, `return` gives the result.
const watchlist = Array.isArray(input) ? input : input && input.watchlist;
if (!Array.isArray(watchlist) || watchlist.length === 0) {
  throw new Error('input must be the watchlist: a non-empty array of tickers, e.g. ["AAPL", "MSFT"]');
}
// A failed call must not sink the report: settle every call.
const settle = (p) => p.then((value) => ({ value }), (error) => ({ error }));
const round1 = (x) => Math.round(x * 10) / 10;

const [snaps, hists, news] = await Promise.all([
  Promise.all(watchlist.map((ticker) => settle(tools.get_stock_snapshot({ ticker })))),
  Promise.all(watchlist.map((ticker) => settle(tools.get_price_history({ ticker, period: "1y" })))),
  Promise.all(watchlist.map((ticker) => settle(tools.search_news({ query: ticker, max_results: 1 })))),
]);

// One-year return and annualized volatility (sample deviation of daily returns), in percent.
function yearStats(bars) {
  const closes = bars.map((b) => b.close);
  if (closes.length < 3) return { ret: null, vol: null };
  const rs = [];
  let sum = 0;
  for (let i = 1; i < closes.length; i++) {
    const r = closes[i] / closes[i - 1] - 1;
    rs.push(r);
    sum += r;
  }
  const mean = sum / rs.length;
  let ss = 0;
  for (const r of rs) ss += (r - mean) * (r - mean);
  return {
    ret: round1((closes[closes.length - 1] / closes[0] - 1) * 100),
    vol: round1(Math.sqrt(ss / (rs.length - 1)) * Math.sqrt(252) * 100),
  };
}

const fail = (ticker, tool, e) => ({ ticker, tool, code: e.code || "E_GUEST_ERROR", retryable: e.retryable === true });
const rows = [], unavailable = [], errors = [];
let asOf = null, source = null;
watchlist.forEach((t, i) => {
  const s = snaps[i], h = hists[i], n = news[i];
  if (s.error) {
    unavailable.push({ ticker: t, code: s.error.code || "E_GUEST_ERROR", message: String(s.error.message).slice(0, 160) });
    return;
  }
  const snap = s.value;
  asOf = asOf || snap.as_of;
  source = source || snap.source;
  let stats = { ret: null, vol: null };
  if (h.error) errors.push(fail(snap.ticker, "get_price_history", h.error));
  else stats = yearStats(h.value.bars);
  let headline = null;
  if (n.error) errors.push(fail(snap.ticker, "search_news", n.error));
  else if (n.value.results.length > 0) headline = n.value.results[0].headline;
  rows.push({ ticker: snap.ticker, price: snap.price, chg_pct: snap.change_pct,
    ret_1y_pct: stats.ret, vol_pct: stats.vol, headline });
});

// The three biggest absolute moves of the day, and their closest peers.
const top = [...rows]
  .sort((a, b) => Math.abs(b.chg_pct) - Math.abs(a.chg_pct) || (a.ticker < b.ticker ? -1 : 1))
  .slice(0, 3);
const peers = await Promise.all(top.map((r) => settle(tools.search_competitors({ ticker: r.ticker }))));
const movers = top.map((r, i) => {
  const p = peers[i];
  if (p.error) {
    errors.push(fail(r.ticker, "search_competitors", p.error));
    return { ticker: r.ticker, chg_pct: r.chg_pct, peers: null };
  }
  return { ticker: r.ticker, chg_pct: r.chg_pct, peers: p.value.competitors.slice(0, 3).map((c) => c.ticker) };
});

return { as_of: asOf, source, rows, movers, unavailable, errors };

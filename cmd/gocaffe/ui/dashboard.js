"use strict";
// The dashboard's page. Everything the log says (output names, the title,
// the solver) is put in the page as text: elements are built with the DOM
// and text set with textContent, never parsed from HTML, so a name such as
// <img src=x onerror=...> is shown as written and runs nothing. (The
// server's Content-Security-Policy forbids inline script as well.)

// The run's token, which the server wants on every /api/ request: it is in
// the page, which only the dashboard's own origin can read.
const token = document.querySelector('meta[name="gocaffe-token"]').content;
const api = (what, init = {}) => fetch("api/" + what, {...init, cache: "no-store", headers: {"X-Gocaffe-Token": token}});

const palette = ["#d62728", "#2ca02c", "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"];
const W = 520, H = 300, M = {l: 50, r: 10, t: 20, b: 30};
const SVG = "http://www.w3.org/2000/svg";

// svg makes an SVG element with attributes and, if given, text.
function svg(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

// chart draws series (name -> [[x, y], ...]) as an SVG line chart, or
// returns null when there is nothing to draw. Each polyline carries its
// data in data-series and data-points, so that what is drawn can be read
// back (the tests do).
function chart(id, title, series) {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const pts of Object.values(series)) {
    for (const [x, y] of pts) {
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
  }
  if (x0 === Infinity) return null;
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  const sx = x => M.l + (x - x0) / (x1 - x0) * (W - M.l - M.r);
  const sy = y => H - M.b - (y - y0) / (y1 - y0) * (H - M.t - M.b);
  const s = svg("svg", {class: "chart", id, width: W, height: H});
  s.append(
    svg("text", {x: W / 2, y: 14, "text-anchor": "middle"}, title),
    svg("line", {x1: M.l, y1: H - M.b, x2: W - M.r, y2: H - M.b, stroke: "#888"}),
    svg("line", {x1: M.l, y1: M.t, x2: M.l, y2: H - M.b, stroke: "#888"}),
    svg("text", {x: M.l, y: H - 10}, x0),
    svg("text", {x: W - M.r, y: H - 10, "text-anchor": "end"}, x1),
    svg("text", {x: 4, y: H - M.b}, +y0.toPrecision(3)),
    svg("text", {x: 4, y: M.t + 8}, +y1.toPrecision(3)));
  let i = 0;
  for (const [name, pts] of Object.entries(series)) {
    const c = palette[i % palette.length];
    s.append(
      svg("polyline", {
        fill: "none", stroke: c, "stroke-width": 1.5,
        points: pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" "),
        "data-series": name,
        "data-points": pts.map(([x, y]) => `${x},${y}`).join(" "),
      }),
      svg("text", {x: W - M.r - 4, y: M.t + 14 + 13 * i, "text-anchor": "end", fill: c}, name));
    i++;
  }
  return s;
}

// columns adds a table's outputs (the columns after NumIters, Seconds and
// LearningRate) to into as series of (iteration, value).
function columns(table, prefix, into) {
  if (!table || table.rows.length === 0) return;
  table.columns.forEach((col, j) => {
    if (j < 3) return;
    into[prefix + col] = table.rows.filter(r => r[j] !== null).map(r => [r[0], r[j]]);
  });
}

function seconds(s) {
  if (!(s >= 0)) return "";
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = Math.floor(s % 60);
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + r + "s";
}

function text(id, s) { document.getElementById(id).textContent = s; }

// problem shows why the state cannot be read (or hides the line).
function problem(s) {
  const p = document.getElementById("problem");
  p.textContent = s;
  p.hidden = !s;
}

async function refresh() {
  let st;
  try {
    const r = await api("state");
    if (!r.ok) { problem(`the dashboard answers ${r.status}: ${await r.text()}`); return; }
    st = await r.json();
  } catch (e) {
    problem(`cannot read the run's state: ${e}`);
    return;
  }
  problem(st.problem || "");
  text("title", st.title);
  text("iter", `iteration ${st.iter} of ${st.max_iter}`);
  text("rate", st.rate > 0 ? `${st.rate.toFixed(2)} iter/s` : "");
  text("eta", st.rate > 0 ? `time left ${seconds(st.eta)}` : "");
  text("solver", st.solver);
  document.getElementById("buttons").hidden = !st.live;
  const outputs = {};
  columns(st.train, "train ", outputs);
  columns(st.test, "test ", outputs);
  const lr = {};
  const t = st.train && st.train.rows.length ? st.train : st.test;
  if (t) lr["learning rate"] = t.rows.filter(r => r[2] !== null).map(r => [r[0], r[2]]);
  const charts = [chart("outputs", "outputs", outputs), chart("lr", "learning rate", lr)].filter(c => c !== null);
  document.getElementById("charts").replaceChildren(...charts);
  document.body.dataset.iter = st.iter;
}

for (const what of ["snapshot", "stop"]) {
  document.getElementById(what).addEventListener("click", async () => {
    try {
      const r = await api(what, {method: "POST"});
      text("said", await r.text());
    } catch (e) {
      text("said", `${e}`);
    }
  });
}
refresh();
setInterval(refresh, 1000);

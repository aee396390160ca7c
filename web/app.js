// The live seat map: a schedule's seats from GET
// /schedules/{id}/seats/events?form=compact (Server-Sent Events; the
// browser reconnects with Last-Event-ID by itself), drawn as the layout
// lays them out, and the checkout calls of the API: the seats the user
// clicks, or the best available ones.
//
// A venue of rows is drawn row by row, each seat a button. A venue of
// sections (a stadium: up to 100,000 seats in up to 500 sections) is drawn
// as one small canvas per section, in order; a click on one zooms to that
// section, drawn as buttons too (or, past DOM_LIMIT seats, on one large
// canvas, with the seat under the pointer named). Statuses live in one
// byte per seat; the changes of an animation frame repaint their own cells
// and nothing else.
//
// A schedule whose sale has a queue (a waiting room) lets only admitted
// buyers hold and book. With a token and a schedule chosen, the page joins
// the schedule's queue (POST /schedules/{id}/queue; 404 queue_not_found:
// no queue), shows the place in line and the wait, live, in place of the
// booking controls (GET /queue/{ticket}/events, read with fetch since it
// needs the token; GET /queue/{ticket} at its Retry-After when the stream
// fails), and once admitted sends the admission with its holds and
// bookings (header Admission). A hold or booking refused 403
// admission_required (a queue put on after the page opened) joins it too.
"use strict";

const $ = (id) => document.getElementById(id);

// A seat's status, one byte: 0 while unknown, then as the compact seat
// map's letters a, h and r.
const AVAILABLE = 1, HELD = 2, RESERVED = 3;
const STATUS = ["unknown", "available", "held", "reserved"];
const CODES = { available: AVAILABLE, held: HELD, reserved: RESERVED };

// A view of at most DOM_LIMIT seats is drawn as buttons (the 2,000-seat
// hall of one row included); a larger one on a canvas.
const DOM_LIMIT = 3000;
// The overview's canvases: at most TILE_WIDTH CSS pixels wide, a seat
// TILE_PITCH pixels apart at most (1 at least, wrapping a row too long).
const TILE_WIDTH = 120, TILE_PITCH = 5;
// The large canvas of a zoomed section: a seat BIG_PITCH pixels apart,
// less (down to BIG_MIN_PITCH) while it would be taller than BIG_HEIGHT.
const BIG_PITCH = 18, BIG_MIN_PITCH = 8, BIG_HEIGHT = 8000, BIG_GUTTER = 44;

const state = {
  scheduleId: null,
  venue: null,            // what venueOf made of the last snapshot
  zoomName: null,         // the section shown alone (null: all of them)
  tiles: [],              // the overview's canvases, by section index
  detail: null,           // the zoomed section's view: {section, canvas?}
  buttons: new Map(),     // seatId -> button, of the view drawn as buttons
  cursor: 0,              // the seat the keys are on, on the large canvas
  selected: new Set(),
  hold: null,             // the user's current hold
  source: null,
  events: 0,
  pending: new Map(),     // seat changes not yet drawn: seatId -> code
  frame: 0,
  busy: false,            // a best-available booking is under way
  reopen: 0,              // the timer that opens a refused stream again
  reopenAfter: 1000,      // its wait, doubled at each refusal up to 15 s
  palette: null,          // the statuses' colours, from the style sheet
  timings: {},            // of the last snapshot, in ms since navigation
  queue: null,            // the shown schedule's place in its queue: {scheduleId, ctl, ticket, state, position, wait}
  admissions: new Map(),  // scheduleId -> the user's admission to its sale
  queueToken: "",         // the token the queue was last joined with
};

function token() { return $("token").value.trim(); }

function say(text) { $("message").textContent = text; }

// api calls the API, with the extra headers given; a problem answer
// throws an Error saying its detail, with the problem itself in
// error.problem.
async function api(method, path, body, extra = {}, signal = undefined) {
  const headers = { "Authorization": "Bearer " + token(), ...extra };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = crypto.randomUUID();
  const resp = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!resp.ok) {
    const seats = data && data.seats ? " (" + data.seats.map((s) => name(s.seatId) + " " + s.reason).join(", ") + ")" : "";
    const err = new Error((data && data.detail ? data.detail : resp.status + " " + resp.statusText) + seats);
    err.problem = data;
    throw err;
  }
  return data;
}

async function loadSchedules() {
  const select = $("schedule");
  try {
    const page = await (await fetch("/schedules?limit=100")).json();
    select.replaceChildren(...page.schedules.map((s) => {
      const o = document.createElement("option");
      o.value = s.id;
      const when = new Date(s.startsAt).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
      o.textContent = "#" + s.id + " " + s.title + " — " + when + " (" + s.seatCount + " seats)";
      o.title = o.textContent;
      return o;
    }));
  } catch (e) {
    say("Could not load the schedules: " + e.message);
    return;
  }
  const params = new URLSearchParams(location.search);
  const wanted = params.get("schedule");
  if (wanted && [...select.options].some((o) => o.value === wanted)) {
    select.value = wanted;
    state.zoomName = params.get("section");
  }
  if (select.value) open(select.value);
}

// open streams the schedule's seat map, replacing the one shown.
function open(scheduleId) {
  if (state.source) state.source.close();
  clearTimeout(state.reopen);
  const changed = state.scheduleId !== scheduleId;
  if (changed) {
    state.selected.clear();
    if (state.scheduleId !== null) state.zoomName = null;
  }
  state.scheduleId = scheduleId;
  if (changed) joinQueue();
  state.pending.clear();
  clearViews();
  const source = new EventSource("/schedules/" + scheduleId + "/seats/events?form=compact");
  state.source = source;
  $("connection").textContent = "connecting";
  source.addEventListener("open", () => {
    $("connection").textContent = "live";
    state.reopenAfter = 1000;
  });
  source.addEventListener("error", () => {
    $("connection").textContent = "reconnecting";
    if (source.readyState !== EventSource.CLOSED) return; // the browser tries again by itself
    // Refused with another status than 200 (a load balancer with no
    // instance ready, 503 too_many_streams), the browser gives the stream
    // up for good: open it again later, from a fresh snapshot.
    state.reopen = setTimeout(() => { if (state.source === source) open(scheduleId); }, state.reopenAfter);
    state.reopenAfter = Math.min(state.reopenAfter * 2, 15000);
  });
  source.addEventListener("snapshot", (e) => {
    const t = { received: performance.now(), bytes: e.data.length };
    const map = JSON.parse(e.data);
    t.compact = map.sections ? 1 : 0;
    const venue = venueOf(map);
    t.parsed = performance.now();
    // The snapshot has every change before it: what waits is older.
    state.pending.clear();
    state.venue = venue;
    render();
    t.drawn = performance.now();
    state.timings = t;
    requestAnimationFrame(() => {
      t.painted = performance.now();
      t.paintedAt = Date.now();
    });
  });
  source.addEventListener("seat", (e) => {
    const change = JSON.parse(e.data);
    state.events++;
    const code = CODES[change.status];
    if (!code) return;
    state.pending.set(change.seatId, code);
    if (!state.frame) state.frame = requestAnimationFrame(flush);
  });
  source.addEventListener("resync", () => {
    // Fell behind: start over from a fresh snapshot.
    open(scheduleId);
  });
  document.body.dataset.schedule = scheduleId;
  selection();
}

// venueOf reads a snapshot: the compact seat map ({sections: [{name,
// rows: [{label, firstSeatId, category, status: "aahr…"}]}]}, a layout of
// rows alone being one section named "") or, from a service without it,
// the list of seats, grouped the same way. Seat ids run 1..count, section
// by section, row by row.
function venueOf(map) {
  const sections = map.sections || sectionsOf(map.seats || []);
  const v = {
    sections: [], rows: [], count: 0, status: null,
    n: [0, 0, 0, 0],                       // seats by status
    categories: [], catAll: [], catFree: [], // by category, in order of first row
    named: false,
  };
  for (const s of sections) {
    for (const r of s.rows) v.count = Math.max(v.count, r.firstSeatId + r.status.length - 1);
  }
  v.status = new Uint8Array(v.count + 1);
  sections.forEach((s, si) => {
    const sec = { name: s.name || "", index: si, rows: [], count: 0, free: 0, category: "" };
    const cats = new Set();
    for (const r of s.rows) {
      const category = r.category || "";
      let cat = v.categories.indexOf(category);
      if (cat < 0 && category) {
        cat = v.categories.push(category) - 1;
        v.catAll.push(0);
        v.catFree.push(0);
      }
      cats.add(category);
      const row = { label: r.label || "", first: r.firstSeatId, count: r.status.length, category, cat, section: si, index: sec.rows.length };
      const letters = r.status, status = v.status;
      let free = 0;
      for (let i = 0; i < row.count; i++) {
        let code;
        switch (letters.charCodeAt(i)) {
          case 97: code = AVAILABLE; free++; break;  // a
          case 104: code = HELD; break;              // h
          case 114: code = RESERVED; break;          // r
          default: code = 0;
        }
        status[row.first + i] = code;
        v.n[code]++;
      }
      sec.count += row.count;
      sec.free += free;
      if (cat >= 0) {
        v.catAll[cat] += row.count;
        v.catFree[cat] += free;
      }
      sec.rows.push(row);
      v.rows.push(row);
    }
    if (cats.size === 1) sec.category = [...cats][0];
    v.sections.push(sec);
  });
  v.rows.sort((a, b) => a.first - b.first);
  v.named = v.sections.length > 1 || (v.sections.length === 1 && v.sections[0].name !== "");
  return v;
}

// sectionsOf groups a full seat map (seats with their section, row and
// status) into the compact one's sections and rows.
function sectionsOf(seats) {
  const sections = [];
  let sec = null, row = null;
  for (const s of seats) {
    const secName = s.section || "";
    const label = s.row === undefined ? "" : s.row;
    if (!sec || sec.name !== secName) {
      sec = { name: secName, rows: [] };
      sections.push(sec);
      row = null;
    }
    if (!row || row.label !== label || s.seatId !== row.firstSeatId + row.letters.length) {
      row = { label, firstSeatId: s.seatId, category: s.category, letters: [] };
      sec.rows.push(row);
    }
    row.letters.push(s.status[0]);
  }
  for (const s of sections) for (const r of s.rows) r.status = r.letters.join("");
  return sections;
}

// rowOf finds a seat's row (a binary search: rows are in seat order).
function rowOf(id) {
  const rows = state.venue ? state.venue.rows : [];
  let lo = 0, hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1, r = rows[mid];
    if (id < r.first) hi = mid - 1;
    else if (id >= r.first + r.count) lo = mid + 1;
    else return r;
  }
  return null;
}

// name is a seat's label ("C7", "114-C7"), or its id where the map has
// none.
function name(id) {
  const r = rowOf(id);
  if (!r || (r.label === "" && !state.venue.named)) return "seat " + id;
  const section = state.venue.sections[r.section].name;
  return (section ? section + "-" : "") + r.label + (id - r.first + 1);
}

function names(ids) { return ids.map(name).join(", "); }

function statusOf(id) {
  const v = state.venue;
  return v && id >= 1 && id <= v.count ? v.status[id] : 0;
}

// description is what a seat's tooltip says: "C7 · vip · held".
function description(id) {
  const r = rowOf(id);
  return [name(id), r && r.category, STATUS[statusOf(id)]].filter(Boolean).join(" · ");
}

// dress shows a seat's button as the seat is.
function dress(b, id) {
  const status = STATUS[statusOf(id)];
  const r = rowOf(id);
  const category = r ? r.category : "";
  b.className = "seat " + status;
  b.dataset.status = status;
  b.title = [name(id), category, status].filter(Boolean).join(" · ");
  b.setAttribute("aria-label", ["Seat " + name(id), category, status].filter(Boolean).join(", "));
  b.setAttribute("aria-pressed", state.selected.has(id) ? "true" : "false");
}

// categoryClass gives each category its look: standard a neutral one,
// the others a colour each, in the order of their first row.
function categoryClass(category) {
  if (!category || category === "standard") return "cat-standard";
  const others = (state.venue ? state.venue.categories : []).filter((c) => c !== "standard");
  return "cat-" + (others.indexOf(category) % 7);
}

// palette reads the statuses' colours (and the page's) from the style
// sheet, for the canvases.
function palette() {
  if (state.palette) return state.palette;
  const css = getComputedStyle(document.documentElement);
  const read = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
  const p = [read("--unknown", "#9e9e9e"), read("--available", "#1b7f3b"), read("--held", "#b36b00"), read("--reserved", "#a3122a")];
  p.ink = read("--ink", "#1d1d1f");
  p.focus = read("--focus", "#1a5fd0");
  p.paper = read("--tile-paper", "#ffffff");
  p.rgb = p.slice(0, 4).map(rgbOf);
  state.palette = p;
  return p;
}

function rgbOf(hex) {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  return m ? [1, 2, 3].map((i) => parseInt(m[i], 16)) : [-1, -1, -1];
}

function clearViews() {
  state.venue = null;
  state.tiles = [];
  state.detail = null;
  state.buttons.clear();
  $("sections").replaceChildren();
  $("sections").hidden = true;
  $("seats").replaceChildren();
  $("detail").hidden = true;
  $("zoom").hidden = true;
  $("hover").hidden = true;
  $("hover").textContent = "";
  const m = $("seatmap").dataset;
  m.seats = m.available = m.held = m.reserved = "0";
  m.zoom = "";
}

// render draws the venue of a new snapshot: the overview of its sections,
// if it has any, and the section zoomed to (a venue of rows: the one).
function render() {
  const v = state.venue;
  for (const id of state.selected) if (statusOf(id) !== AVAILABLE) state.selected.delete(id);
  let drawn = 0;
  if (v.named) {
    drawn = drawTiles();
  } else {
    $("sections").replaceChildren();
    state.tiles = [];
  }
  legend();
  sectionChoice();
  let zoom = v.named ? v.sections.findIndex((s) => s.name === state.zoomName) : 0;
  if (v.named && zoom < 0 && v.sections.length === 1) zoom = 0;
  const shown = show(zoom);
  $("seatmap").dataset.seats = String(v.named ? drawn : shown);
  counts();
  selection();
}

// drawTiles draws every section on a canvas of its own, in order, one
// pitch for all (so that sections of a size look alike), and returns how
// many seats it drew.
function drawTiles() {
  const v = state.venue;
  let widest = 1;
  for (const r of v.rows) widest = Math.max(widest, r.count);
  const pitch = Math.max(1, Math.min(TILE_PITCH, Math.floor(TILE_WIDTH / widest)));
  const frag = document.createDocumentFragment();
  let drawn = 0, tileWidth = 0;
  state.tiles = v.sections.map((sec) => {
    const g = geometry(sec, pitch, TILE_WIDTH, 0, 0);
    const b = document.createElement("button");
    b.type = "button";
    b.className = "tile " + categoryClass(sec.category);
    b.dataset.section = sec.name;
    const canvas = document.createElement("canvas");
    const ctx = sizeCanvas(canvas, g.width, g.height);
    const label = document.createElement("span");
    label.className = "name";
    label.textContent = sec.name;
    const free = document.createElement("span");
    free.className = "free";
    b.append(canvas, label, free);
    frag.appendChild(b);
    const tile = { section: sec.index, canvas, ctx, g, big: false, button: b, free };
    drawn += paintSection(tile, sec);
    tileWidth = Math.max(tileWidth, g.width);
    return tile;
  });
  const grid = $("sections");
  grid.style.setProperty("--tile", Math.max(tileWidth, 48) + 16 + "px");
  grid.replaceChildren(frag);
  for (const sec of v.sections) tileText(sec);
  return drawn;
}

// tileText says how many of a section's seats are free, on its tile and,
// when it is zoomed to, above it.
function tileText(sec) {
  const tile = state.tiles[sec.index];
  const text = sec.free + " of " + sec.count + " free";
  if (tile) {
    tile.free.textContent = sec.free + " free";
    tile.button.title = "Section " + sec.name + " · " + text;
    tile.button.setAttribute("aria-label", "Section " + sec.name + (sec.category ? ", " + sec.category : "") + ", " + text);
    tile.button.classList.toggle("full", sec.free === 0);
  }
  if (state.detail && state.detail.section === sec.index) $("zoom-free").textContent = text;
}

// show zooms to section index (-1: the overview of all sections) and
// returns how many seats the zoomed view drew.
function show(index) {
  const v = state.venue;
  state.buttons.clear();
  state.detail = null;
  $("seats").replaceChildren();
  $("detail").hidden = true;
  $("hover").hidden = true;
  $("hover").textContent = "";
  const zoomed = index >= 0 && index < v.sections.length;
  $("sections").hidden = !v.named || zoomed;
  $("zoom").hidden = !v.named || !zoomed;
  if (v.named) for (const t of state.tiles) t.button.classList.toggle("zoomed", zoomed && t.section === index);
  if (!zoomed) {
    state.zoomName = null;
    $("seatmap").dataset.zoom = "";
    return 0;
  }
  const sec = v.sections[index];
  state.zoomName = v.named ? sec.name : null;
  $("seatmap").dataset.zoom = sec.name;
  if (v.named) {
    $("zoom-title").textContent = "Section " + sec.name + (sec.category ? " · " + sec.category : "");
    $("zoom-prev").disabled = index === 0;
    $("zoom-next").disabled = index === v.sections.length - 1;
  }
  state.detail = { section: index };
  let drawn;
  if (sec.count <= DOM_LIMIT) {
    drawn = drawButtons(sec);
  } else {
    drawn = drawBig(sec);
  }
  tileText(sec);
  return drawn;
}

// zoom shows the section named name alone (null: all of them), and makes
// it the one "Book N together" books in.
function zoom(sectionName) {
  const v = state.venue;
  if (!v || !v.named) return;
  const index = sectionName === null ? -1 : v.sections.findIndex((s) => s.name === sectionName);
  show(index);
  $("best-section").value = state.zoomName || "";
  const url = new URL(location.href);
  url.searchParams.set("schedule", state.scheduleId);
  if (state.zoomName) url.searchParams.set("section", state.zoomName);
  else url.searchParams.delete("section");
  history.replaceState(null, "", url);
  const top = $("seatmap").getBoundingClientRect().top;
  if (top < 0) $("seatmap").scrollIntoView({ block: "start" });
  selection();
}

// drawButtons draws a section (or the venue of rows) one line per row (a
// long row wraps), its label first, each seat a button showing its
// number; it returns how many seats it drew.
function drawButtons(sec) {
  densify(sec);
  const frag = document.createDocumentFragment();
  let drawn = 0;
  for (const r of sec.rows) {
    const row = document.createElement("div");
    row.className = "row " + categoryClass(r.category);
    row.dataset.row = r.label;
    row.setAttribute("role", "group");
    row.setAttribute("aria-label", r.label === "" ? "Seats" : "Row " + r.label + (r.category ? ", " + r.category : ""));
    const label = document.createElement("span");
    label.className = "row-label";
    label.textContent = r.label;
    label.title = r.label === "" ? "" : "Row " + r.label + (r.category ? " · " + r.category : "");
    label.setAttribute("aria-hidden", "true");
    const seats = document.createElement("div");
    seats.className = "row-seats";
    for (let i = 0; i < r.count; i++) {
      const id = r.first + i;
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = i + 1;
      b.dataset.seat = id;
      dress(b, id);
      seats.appendChild(b);
      state.buttons.set(id, b);
      drawn++;
    }
    row.append(label, seats);
    frag.appendChild(row);
  }
  $("seats").replaceChildren(frag);
  return drawn;
}

// densify makes the buttons smaller when that lets the widest row fit in
// one line (the 40 seats of a stadium's row, say).
function densify(sec) {
  let widest = 0;
  for (const r of sec.rows) widest = Math.max(widest, r.count);
  const room = $("seats").clientWidth - 64;
  $("seats").classList.toggle("dense", widest * 44 > room && widest * 24 <= room);
}

// drawBig draws a section too large for buttons on one canvas as wide as
// the page, its rows wrapping, their labels in a gutter.
function drawBig(sec) {
  const canvas = $("detail");
  canvas.hidden = false;
  $("hover").hidden = false;
  const width = Math.max(240, $("seatmap").clientWidth || 1000);
  let pitch = BIG_PITCH, g;
  for (;;) {
    g = geometry(sec, pitch, width, BIG_GUTTER, Math.ceil(pitch / 2));
    if (g.height <= BIG_HEIGHT || pitch <= BIG_MIN_PITCH) break;
    pitch -= 2;
  }
  const ctx = sizeCanvas(canvas, g.width, g.height);
  canvas.setAttribute("aria-label", (sec.name ? "Section " + sec.name + ", " : "") + sec.count +
    " seats: the arrow keys move from seat to seat, Enter or Space selects one");
  const view = { section: sec.index, canvas, ctx, g, big: true };
  state.detail = view;
  return paintSection(view, sec);
}

// geometry lays a section's rows out in lines of at most perLine seats,
// pitch pixels apart, centred under the widest line, after a gutter.
function geometry(sec, pitch, maxWidth, gutter, rowGap) {
  const perLine = Math.max(1, Math.floor((maxWidth - gutter) / pitch));
  let widest = 1;
  for (const r of sec.rows) widest = Math.max(widest, Math.min(r.count, perLine));
  const rowY = [];
  let y = 0;
  for (const r of sec.rows) {
    rowY.push(y);
    y += Math.ceil(r.count / perLine) * pitch + rowGap;
  }
  return { pitch, perLine, widest, gutter, rowY, width: gutter + widest * pitch, height: Math.max(pitch, y - rowGap) };
}

// lineStart is the x of the first seat of a row's line.
function lineStart(g, row, line) {
  const inLine = Math.min(g.perLine, row.count - line * g.perLine);
  return g.gutter + ((g.widest - inLine) >> 1) * g.pitch;
}

// cellOf is the top left corner of a seat's cell.
function cellOf(g, row, id) {
  const i = id - row.first, line = Math.floor(i / g.perLine);
  return [lineStart(g, row, line) + (i - line * g.perLine) * g.pitch, g.rowY[row.index] + line * g.pitch];
}

// seatAt is the seat whose cell is at x, y of a view, or 0.
function seatAt(view, x, y) {
  const g = view.g, sec = state.venue.sections[view.section];
  for (const r of sec.rows) {
    const top = g.rowY[r.index], lines = Math.ceil(r.count / g.perLine);
    if (y < top || y >= top + lines * g.pitch) continue;
    const line = Math.floor((y - top) / g.pitch);
    const col = Math.floor((x - lineStart(g, r, line)) / g.pitch);
    const inLine = Math.min(g.perLine, r.count - line * g.perLine);
    return col >= 0 && col < inLine ? r.first + line * g.perLine + col : 0;
  }
  return 0;
}

function sizeCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = width + "px";
  canvas.style.height = height + "px";
  const ctx = canvas.getContext("2d", { alpha: false });
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// cellSize is the side of a seat's square: the pitch, less the gap
// between seats when there is room for one.
function cellSize(view) {
  const p = view.g.pitch;
  return view.big ? p - 2 : p >= 3 ? p - 1 : p;
}

// paintSection paints a view's section whole and returns how many seats
// it painted.
function paintSection(view, sec) {
  const pal = palette(), g = view.g, ctx = view.ctx, status = state.venue.status;
  ctx.fillStyle = pal.paper;
  ctx.fillRect(0, 0, g.width, g.height);
  if (view.big) {
    ctx.font = Math.min(13, g.pitch) + "px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (const r of sec.rows) {
      const lines = Math.ceil(r.count / g.perLine);
      ctx.fillStyle = categoryColour(r.category);
      ctx.fillRect(g.gutter - 6, g.rowY[r.index], 3, lines * g.pitch);
      ctx.fillStyle = pal.ink;
      ctx.fillText(r.label, g.gutter - 10, g.rowY[r.index] + g.pitch / 2);
    }
  }
  let painted = 0;
  if (!view.big) {
    // The overview: squares only, the colour set only when it changes.
    const s = cellSize(view);
    let last = -1;
    for (const r of sec.rows) {
      for (let i = 0; i < r.count; i++) {
        const id = r.first + i, code = status[id];
        const line = Math.floor(i / g.perLine);
        const x = lineStart(g, r, line) + (i - line * g.perLine) * g.pitch, y = g.rowY[r.index] + line * g.pitch;
        if (code !== last) { ctx.fillStyle = pal[code]; last = code; }
        ctx.fillRect(x, y, s, s);
        painted++;
      }
    }
    return painted;
  }
  for (const r of sec.rows) {
    for (let i = 0; i < r.count; i++) {
      paintCell(view, r, r.first + i, false);
      painted++;
    }
  }
  return painted;
}

// paintCell paints one seat of a view as it is now. On the large canvas a
// held seat is striped and a reserved one struck through, as the buttons
// are, and a selected one ringed.
function paintCell(view, row, id, clear = true) {
  const pal = palette(), ctx = view.ctx, p = view.g.pitch, s = cellSize(view);
  const [x, y] = cellOf(view.g, row, id);
  const code = statusOf(id);
  if (!view.big) {
    ctx.fillStyle = pal[code];
    ctx.fillRect(x, y, s, s);
    return;
  }
  if (clear) {
    ctx.fillStyle = pal.paper;
    ctx.fillRect(x, y, p, p);
  }
  ctx.fillStyle = pal[code];
  ctx.fillRect(x + 1, y + 1, s, s);
  if (code === HELD) {
    ctx.strokeStyle = "rgba(255,255,255,.5)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(x + 1, y + 1 + s);
    ctx.lineTo(x + 1 + s, y + 1);
    ctx.stroke();
  } else if (code === RESERVED) {
    ctx.fillStyle = "rgba(255,255,255,.75)";
    ctx.fillRect(x + 1, y + 1 + (s >> 1), s, 1);
  }
  if (state.selected.has(id)) {
    ctx.strokeStyle = pal.ink;
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 0.5, y + 0.5, p - 1, p - 1);
  }
  if (id === state.cursor && document.activeElement === view.canvas) {
    ctx.strokeStyle = pal.focus;
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 1.5, y + 1.5, s - 1, s - 1);
  }
}

// samplePoint is where a seat's colour is read back from its canvas: in
// its square, clear of the stripe, the strike and the ring.
function samplePoint(view, row, id) {
  const [x, y] = cellOf(view.g, row, id), s = cellSize(view);
  const o = view.big ? 1 + Math.max(1, s >> 2) : s >> 1;
  return [x + o, y + o];
}

function categoryColour(category) {
  const li = [...$("categories").children].find((e) => e.dataset.category === category);
  return (li && getComputedStyle(li).getPropertyValue("--cat").trim()) || "#c4c4c4";
}

// repaint shows a seat as it is now wherever it is drawn.
function repaint(id) {
  const r = rowOf(id);
  if (!r) return;
  const tile = state.tiles[r.section];
  if (tile) paintCell(tile, r, id);
  const d = state.detail;
  if (d && d.section === r.section) {
    if (d.canvas) paintCell(d, r, id);
    else {
      const b = state.buttons.get(id);
      if (b) dress(b, id);
    }
  }
}

// legend lists the categories with their look, and fills the category
// choice of the best-available control (keeping the one chosen).
function legend() {
  const v = state.venue;
  $("categories").replaceChildren(...v.categories.map((c) => {
    const li = document.createElement("li");
    li.className = categoryClass(c);
    li.dataset.category = c;
    const swatch = document.createElement("span");
    swatch.className = "swatch cat";
    swatch.setAttribute("aria-hidden", "true");
    const free = document.createElement("span");
    free.className = "free";
    li.append(swatch, c + " ", free);
    return li;
  }));
  const select = $("best-category");
  const chosen = select.value;
  const any = document.createElement("option");
  any.value = "";
  any.textContent = "any";
  select.replaceChildren(any, ...v.categories.map((c) => {
    const o = document.createElement("option");
    o.value = c;
    o.textContent = c;
    return o;
  }));
  select.value = v.categories.includes(chosen) ? chosen : "";
}

// sectionChoice fills the section choice of the best-available control,
// shown for a venue of sections only.
function sectionChoice() {
  const v = state.venue;
  const select = $("best-section");
  const any = document.createElement("option");
  any.value = "";
  any.textContent = "any";
  select.replaceChildren(any, ...(v.named ? v.sections : []).map((s) => {
    const o = document.createElement("option");
    o.value = s.name;
    o.textContent = s.name;
    return o;
  }));
  $("best-section-choice").hidden = !v.named;
}

// flush draws the changes of one animation frame: each changed seat's
// cell on its section's canvas (and its button or cell in the zoomed
// view), then the counts once.
function flush() {
  state.frame = 0;
  const v = state.venue;
  if (!v) { state.pending.clear(); return; }
  const touched = new Set();
  for (const [id, code] of state.pending) {
    const r = rowOf(id);
    if (!r) continue;
    const old = v.status[id];
    if (code !== AVAILABLE) state.selected.delete(id);
    if (old !== code) {
      v.status[id] = code;
      v.n[old]--;
      v.n[code]++;
      const sec = v.sections[r.section];
      const delta = (code === AVAILABLE) - (old === AVAILABLE);
      sec.free += delta;
      if (r.cat >= 0) v.catFree[r.cat] += delta;
      touched.add(sec);
    }
    repaint(id);
  }
  state.pending.clear();
  for (const sec of touched) tileText(sec);
  counts();
  selection();
}

function counts() {
  const v = state.venue;
  const n = v ? v.n : [0, 0, 0, 0];
  $("count-available").textContent = n[AVAILABLE];
  $("count-held").textContent = n[HELD];
  $("count-reserved").textContent = n[RESERVED];
  const m = $("seatmap").dataset;
  m.available = n[AVAILABLE];
  m.held = n[HELD];
  m.reserved = n[RESERVED];
  if (!v) return;
  for (const li of $("categories").children) {
    const c = v.categories.indexOf(li.dataset.category);
    li.querySelector(".free").textContent = (v.catFree[c] || 0) + " of " + (v.catAll[c] || 0) + " free";
  }
}

function toggle(id) {
  if (statusOf(id) !== AVAILABLE && !state.selected.has(id)) {
    say(name(id) + " is " + STATUS[statusOf(id)] + ".");
    return;
  }
  if (state.selected.has(id)) state.selected.delete(id);
  else if (state.selected.size < 10) state.selected.add(id);
  else { say("A hold takes at most 10 seats."); return; }
  repaint(id);
  selection();
}

function unselect() {
  const ids = [...state.selected];
  state.selected.clear();
  for (const id of ids) repaint(id);
}

function selection() {
  const ids = [...state.selected].sort((a, b) => a - b);
  $("selection").textContent = ids.length ? "Selected: " + names(ids) + "." : "No seat selected. Click available seats to select them (up to 10).";
  $("hold").disabled = ids.length === 0;
  $("book").disabled = ids.length !== 1;
  const active = state.hold && state.hold.status === "active";
  $("confirm").disabled = !active;
  $("release").disabled = !active;
  $("best").disabled = state.busy || state.scheduleId === null;
  const held = state.hold && (state.hold.seatLabels && state.hold.seatLabels.length ? state.hold.seatLabels.join(", ") : names(state.hold.seatIds));
  $("hold-state").textContent = state.hold
    ? "Your hold of " + held + " is " + state.hold.status +
      (state.hold.status === "active" ? " until " + new Date(state.hold.expiresAt).toLocaleTimeString() : "") + "."
    : "";
}

function quantity() { return Number($("best-quantity").value); }

function bestLabel() {
  const q = quantity();
  $("best").textContent = Number.isInteger(q) && q > 1 ? "Book " + q + " together" : "Book the best seat";
}

// bookBest holds the best available seats (POST /holds with a quantity,
// and the section chosen or zoomed to) and books them at once (POST
// /holds/{id}/confirm).
async function bookBest() {
  const q = quantity();
  if (!Number.isInteger(q) || q < 1 || q > 10) throw new Error("choose 1 to 10 seats.");
  const category = $("best-category").value;
  const section = state.venue && state.venue.named ? $("best-section").value : "";
  const body = { scheduleId: Number(state.scheduleId), quantity: q };
  if (category) body.category = category;
  if (section) body.section = section;
  const where = section ? " in section " + section : "";
  const what = q + (category ? " " + category : "") + (q === 1 ? " seat" : " seats") + where;
  say("Finding the best " + what + "…");
  let hold;
  try {
    hold = await api("POST", "/holds", body, admission());
  } catch (e) {
    const p = e.problem;
    if (p && p.code === "not_enough_seats" && typeof p.available === "number") {
      const free = p.available === 0 ? "no " + (category ? category + " " : "") + "seat is" :
        p.available + (category ? " " + category : "") + (p.available === 1 ? " seat is" : " seats are");
      throw new Error(free + " available" + where + ", not " + q + (q > 1 ? " together" : "") + ". " + p.detail);
    }
    throw e;
  }
  state.hold = hold;
  const labels = hold.seatLabels && hold.seatLabels.length ? hold.seatLabels.join(", ") : names(hold.seatIds);
  try {
    await api("POST", "/holds/" + hold.id + "/confirm");
  } catch (e) {
    throw new Error("held " + labels + " but could not book them: " + e.message + " Confirm or release the hold.");
  }
  state.hold = { ...hold, status: "confirmed" };
  return "Booked " + (q > 1 ? q + " together" : "the best seat") + ": " + labels + ".";
}

async function act(action, fn) {
  if (!token()) { say("Paste a bearer token first."); $("token").focus(); return; }
  try {
    say(await fn());
  } catch (e) {
    const code = e.problem && e.problem.code;
    if (code === "admission_required" || code === "admission_invalid") {
      // The sale has a queue (put on since the page joined, or the
      // admission ran out): take a place in it.
      state.admissions.delete(String(state.scheduleId));
      say(action + " needs a turn in this sale's queue: joining it.");
      joinQueue(true);
    } else {
      say(action + " failed: " + e.message);
    }
  }
  selection();
}

// The waiting room.

// admission is the header that admits the user to the shown schedule's
// sale, if the page has one.
function admission() {
  const a = state.admissions.get(String(state.scheduleId));
  return a ? { "Admission": a } : {};
}

// tokenChanged joins the shown schedule's queue again as the user the new
// token names.
function tokenChanged() {
  if (token() === state.queueToken) return;
  state.admissions.clear();
  joinQueue();
}

// stopQueue stops following the queue shown, if any.
function stopQueue() {
  if (state.queue) state.queue.ctl.abort();
  state.queue = null;
  showQueue(null);
}

// joinQueue takes a place in the shown schedule's queue, or finds the
// user's, shows it, and follows it until the user is admitted. asked: a
// hold or booking was refused for want of an admission.
async function joinQueue(asked = false) {
  stopQueue();
  state.queueToken = token();
  if (!token() || state.scheduleId === null) return;
  const q = { scheduleId: String(state.scheduleId), token: token(), ctl: new AbortController(), ticket: null, state: "" };
  state.queue = q;
  let t;
  try {
    t = await api("POST", "/schedules/" + q.scheduleId + "/queue", undefined, {}, q.ctl.signal);
  } catch (e) {
    if (state.queue !== q) return;
    state.queue = null;
    const code = e.problem && e.problem.code;
    // No queue (or a service without queues): the sale is open to all.
    if (code === "queue_not_found" || code === "queue_unsupported") {
      if (asked) say("This sale has no queue any more: try again.");
    } else if (code !== "unauthorized" || asked) {
      // (A token half pasted is not worth a word.)
      say("Could not join this sale's queue: " + e.message);
    }
    return;
  }
  if (state.queue !== q) return;
  q.ticket = t.ticket;
  ticketIs(q, t);
  if (waits(t.state)) follow(q);
}

function waits(s) { return s === "prequeue" || s === "waiting"; }

// ticketIs takes in where the ticket stands now.
function ticketIs(q, t) {
  if (state.queue !== q) return;
  const was = q.state;
  q.state = t.state;
  q.position = t.position === null ? undefined : t.position;
  q.wait = t.estimatedWaitSeconds === null ? undefined : t.estimatedWaitSeconds;
  if (t.state === "admitted" && t.admission) state.admissions.set(q.scheduleId, t.admission);
  else state.admissions.delete(q.scheduleId);
  showQueue(t);
  if (t.state === "admitted" && was !== "admitted") {
    const until = t.admissionExpiresAt ? " until " + new Date(t.admissionExpiresAt).toLocaleTimeString() : "";
    say("It is your turn: you may hold and book seats" + until + ".");
    if (t.admissionExpiresAt) {
      // When the turn is over, show so (the ticket then says expired);
      // not sooner than 15 s, should this browser's clock be ahead.
      const timer = setTimeout(() => { if (state.queue === q) joinQueue(); },
        Math.min(Math.max(Date.parse(t.admissionExpiresAt) - Date.now() + 1000, 15000), 2 ** 31 - 1));
      q.ctl.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    }
  }
}

// showQueue shows the ticket t in the waiting room's panel in place of the
// booking controls, until it is admitted (t null: no queue).
function showQueue(t) {
  const waiting = Boolean(t) && t.state !== "admitted";
  const panel = $("queue");
  panel.hidden = !waiting;
  $("best-controls").hidden = waiting;
  $("actions").hidden = waiting;
  panel.dataset.state = t ? t.state : "";
  panel.dataset.position = t && typeof t.position === "number" ? String(t.position) : "";
  if (!waiting) return;
  let text;
  switch (t.state) {
    case "prequeue":
      text = "The sale opens at " + new Date(t.opensAt).toLocaleString([], { dateStyle: "medium", timeStyle: "medium" }) +
        ". You have a place in its queue: everyone who joins before then is put in random order.";
      break;
    case "waiting":
      // No estimate: the place waits on an admitted buyer finishing.
      text = "You are in the queue: position " + t.position + (t.estimatedWaitSeconds === null
        ? "; your turn comes when a buyer let in before you finishes."
        : ", about " + about(t.estimatedWaitSeconds) + ".");
      break;
    case "expired":
      text = "Your turn ended" + (t.admissionExpiresAt ? " at " + new Date(t.admissionExpiresAt).toLocaleTimeString() : "") + ".";
      break;
    case "left":
      text = "You left this sale's queue.";
      break;
    default:
      text = "Your place in the queue is " + t.state + ".";
  }
  // Changed text only: aria-live reads each change out.
  const status = $("queue-status");
  if (status.textContent !== text) status.textContent = text;
}

function about(seconds) {
  const s = Math.max(1, Math.round(seconds || 0));
  return s < 90 ? s + " s" : Math.round(s / 60) + " min";
}

// follow reads the ticket's events until the user is admitted or the
// ticket ends. A stream that ends is opened again; one that cannot open
// three times running is given up for asking for the ticket at the
// service's Retry-After.
async function follow(q) {
  let failures = 0;
  while (state.queue === q) {
    if (failures < 3) {
      try {
        if (await stream(q)) return;
        failures = 0;
      } catch {
        failures++;
      }
      if (state.queue !== q) return;
    }
    const r = await ticketNow(q);
    if (state.queue !== q) return;
    let after = failures >= 3 ? 5 : Math.max(1, failures);
    if (r && r.status === 404) {
      // The queue was taken away: the sale is open to everyone.
      state.queue = null;
      state.admissions.delete(q.scheduleId);
      showQueue(null);
      say("This sale's queue was removed: you may hold and book seats.");
      return;
    } else if (r && r.status === 200 && r.data) {
      ticketIs(q, r.data);
      if (!waits(r.data.state)) return;
      if (failures >= 3 && r.retryAfter > 0) after = r.retryAfter;
    } else if (r && (r.status === 401 || r.status === 403)) {
      say("Could not follow your place in the queue: " + (r.data && r.data.detail ? r.data.detail : r.status));
      return;
    } else if (r && r.retryAfter > 0) {
      after = r.retryAfter;
    }
    await sleep(Math.min(Math.max(after, 1), 30) * 1000, q.ctl.signal);
  }
}

// ticketNow asks where the ticket stands (GET /queue/{ticket}): its
// status, body and Retry-After, or null when the request failed.
async function ticketNow(q) {
  try {
    const resp = await fetch("/queue/" + encodeURIComponent(q.ticket),
      { headers: { "Authorization": "Bearer " + q.token }, signal: q.ctl.signal, cache: "no-store" });
    const data = await resp.json().catch(() => null);
    return { status: resp.status, data, retryAfter: Number(resp.headers.get("Retry-After")) || 0 };
  } catch {
    return null;
  }
}

// stream reads the ticket's events (GET /queue/{ticket}/events, Server-
// Sent Events read through fetch: EventSource cannot send the token)
// until the admitted one (true) or the stream's end (false); it throws
// when the stream does not open.
async function stream(q) {
  const resp = await fetch("/queue/" + encodeURIComponent(q.ticket) + "/events",
    { headers: { "Authorization": "Bearer " + q.token, "Accept": "text/event-stream" }, signal: q.ctl.signal, cache: "no-store" });
  if (!resp.ok || !resp.body) {
    resp.body && resp.body.cancel().catch(() => {});
    throw new Error("the queue's stream answered " + resp.status);
  }
  const reader = resp.body.getReader(), decoder = new TextDecoder();
  let text = "", event = "", data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      text += decoder.decode(value, { stream: true });
      for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n")) {
        const line = text.slice(0, end).replace(/\r$/, "");
        text = text.slice(end + 1);
        if (line === "") {
          if (data.length) {
            ticketIs(q, JSON.parse(data.join("\n")));
            if (event === "admitted") return true;
          }
          event = "";
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const v = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = v;
          else if (field === "data") data.push(v);
        }
      }
    }
  } catch {
    return false; // broken after it opened: the caller reads the ticket
  } finally {
    reader.cancel().catch(() => {});
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

// keys move the cursor over the large canvas's seats (the arrows, Home
// and End) and select the seat it is on (Enter, Space).
function keys(e) {
  const d = state.detail;
  const r = rowOf(state.cursor);
  if (!d || !d.canvas || !r || r.section !== d.section) return;
  const sec = state.venue.sections[d.section];
  let id = state.cursor;
  switch (e.key) {
    case "ArrowLeft": id = Math.max(r.first, id - 1); break;
    case "ArrowRight": id = Math.min(r.first + r.count - 1, id + 1); break;
    case "ArrowUp":
    case "ArrowDown": {
      const to = sec.rows[r.index + (e.key === "ArrowUp" ? -1 : 1)];
      if (to) id = to.first + Math.min(id - r.first, to.count - 1);
      break;
    }
    case "Home": id = r.first; break;
    case "End": id = r.first + r.count - 1; break;
    case "Enter":
    case " ": toggle(id); break;
    default: return;
  }
  e.preventDefault();
  moveCursor(id);
}

// moveCursor puts the keys' cursor on seat id, names it, and (scroll)
// scrolls it into view.
function moveCursor(id, scroll = true) {
  const old = state.cursor;
  state.cursor = id;
  if (old && old !== id) repaint(old);
  repaint(id);
  $("hover").textContent = description(id);
  const at = window.seatmap.point(id);
  if (scroll && at && (at.y < 0 || at.y > innerHeight)) window.scrollBy(0, at.y - innerHeight / 2);
}

// pointed is the seat under the pointer on the large canvas, or 0.
function pointed(e) {
  const d = state.detail;
  if (!d || !d.canvas) return 0;
  const box = d.canvas.getBoundingClientRect();
  return seatAt(d, e.clientX - box.left, e.clientY - box.top);
}

function wire() {
  $("token").value = localStorage.getItem("seatlock.token") || "";
  $("token").addEventListener("change", () => {
    localStorage.setItem("seatlock.token", token());
    tokenChanged();
  });
  // A pasted token is used without waiting for the field to lose focus.
  let typed = 0;
  $("token").addEventListener("input", () => {
    clearTimeout(typed);
    typed = setTimeout(tokenChanged, 400);
  });
  $("schedule").addEventListener("change", (e) => open(e.target.value));
  // One listener for every seat, however many.
  $("seats").addEventListener("click", (e) => {
    const b = e.target.closest("button.seat");
    if (b) toggle(Number(b.dataset.seat));
  });
  $("sections").addEventListener("click", (e) => {
    const b = e.target.closest("button.tile");
    if (b) zoom(b.dataset.section);
  });
  $("overview").addEventListener("click", () => zoom(null));
  const step = (by) => {
    const d = state.detail, v = state.venue;
    if (d && v && v.sections[d.section + by]) zoom(v.sections[d.section + by].name);
  };
  $("zoom-prev").addEventListener("click", () => step(-1));
  $("zoom-next").addEventListener("click", () => step(1));
  $("best-section").addEventListener("change", (e) => zoom(e.target.value || null));
  const detail = $("detail");
  detail.addEventListener("mousemove", (e) => {
    const id = pointed(e);
    const text = id ? description(id) : "";
    detail.title = text;
    $("hover").textContent = text;
  });
  detail.addEventListener("mouseleave", () => { $("hover").textContent = ""; });
  detail.addEventListener("click", (e) => {
    const id = pointed(e);
    if (!id) return;
    toggle(id);
    moveCursor(id, false);
  });
  detail.addEventListener("keydown", keys);
  detail.addEventListener("focus", () => {
    const d = state.detail;
    if (!d || !d.canvas) return;
    const r = rowOf(state.cursor);
    // Not scrolled: a click focuses the canvas too, and puts the cursor
    // on its seat.
    moveCursor(r && r.section === d.section ? state.cursor : state.venue.sections[d.section].rows[0].first, false);
  });
  detail.addEventListener("blur", () => { if (state.cursor) repaint(state.cursor); });
  let resized = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      const d = state.detail;
      if (d && d.canvas) drawBig(state.venue.sections[d.section]);
      else if (d) densify(state.venue.sections[d.section]);
    }, 200);
  });
  $("hold").addEventListener("click", () => act("Hold", async () => {
    const seatIds = [...state.selected].sort((a, b) => a - b);
    state.hold = await api("POST", "/holds", { scheduleId: Number(state.scheduleId), seatIds }, admission());
    unselect();
    return "Held " + names(seatIds) + ".";
  }));
  $("book").addEventListener("click", () => act("Booking", async () => {
    const [seatId] = state.selected;
    const r = await api("POST", "/reservations", { scheduleId: Number(state.scheduleId), seatId }, admission());
    unselect();
    return "Booked " + name(r.seatId) + ".";
  }));
  $("confirm").addEventListener("click", () => act("Confirm", async () => {
    const r = await api("POST", "/holds/" + state.hold.id + "/confirm");
    state.hold = { ...state.hold, status: "confirmed" };
    return "Booked " + names(r.reservations.map((x) => x.seatId)) + ".";
  }));
  $("release").addEventListener("click", () => act("Release", async () => {
    await api("DELETE", "/holds/" + state.hold.id);
    state.hold = { ...state.hold, status: "released" };
    return "Released the hold.";
  }));
  $("best-quantity").addEventListener("input", bestLabel);
  $("best").addEventListener("click", () => {
    if (state.busy) return;
    const label = $("best").textContent;
    state.busy = true;
    selection();
    act(label, bookBest).finally(() => { state.busy = false; selection(); });
  });
  setInterval(() => { $("rate").textContent = state.events; state.events = 0; }, 1000);
  bestLabel();
  selection();
  loadSchedules();
}

// window.seatmap lets a test (or a curious user's console) ask what the
// page holds and what it drew.
window.seatmap = {
  // timings of the last snapshot, in ms since the navigation began:
  // received, parsed, drawn (the canvases and buttons made) and painted
  // (the next frame; paintedAt, the same in ms since 1970); and its size (bytes, of its JSON) and form
  // (compact: 1 for the compact seat map, 0 for the list of seats).
  get timings() { return { ...state.timings }; },
  // status is a seat's status as the page knows it.
  status(id) { return state.venue ? STATUS[statusOf(id)] : null; },
  // statuses are every seat's, one letter each (a, h, r; ? unknown).
  statuses() {
    const v = state.venue;
    if (!v) return "";
    const letters = ["?", "a", "h", "r"], out = new Array(v.count);
    for (let id = 1; id <= v.count; id++) out[id - 1] = letters[v.status[id]];
    return out.join("");
  },
  label(id) { return name(id); },
  section(id) {
    const r = rowOf(id);
    return r ? state.venue.sections[r.section].name : null;
  },
  // drawn is the status a seat is drawn with, read back from the pixels
  // of its cell: on its section's canvas in the overview ("overview", the
  // default for a venue of sections), or in the zoomed view ("zoom": its
  // cell, or its button's status); null where it is not drawn.
  drawn(id, where) {
    const r = rowOf(id);
    if (!r) return null;
    const zoomed = state.detail && state.detail.section === r.section ? state.detail : null;
    const view = (where || (state.tiles.length ? "overview" : "zoom")) === "overview" ? state.tiles[r.section] : zoomed;
    if (!view) return null;
    if (!view.canvas) {
      const b = state.buttons.get(id);
      return b ? b.dataset.status : null;
    }
    const [x, y] = samplePoint(view, r, id);
    const dpr = window.devicePixelRatio || 1;
    const px = view.ctx.getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data;
    const i = palette().rgb.findIndex((c) => c[0] === px[0] && c[1] === px[1] && c[2] === px[2]);
    return i >= 0 ? STATUS[i] : "rgb(" + px[0] + "," + px[1] + "," + px[2] + ")";
  },
  // queue is the page's place in the shown schedule's queue: its state
  // (null without a queue), position, estimated wait and whether it holds
  // an admission.
  queue() {
    const q = state.queue;
    return {
      state: q ? q.state || "joining" : null,
      position: q && q.position !== undefined ? q.position : null,
      wait: q && q.wait !== undefined ? q.wait : null,
      admitted: state.admissions.has(String(state.scheduleId)),
    };
  },
  // point is where a seat is on the screen (its cell's or button's
  // centre, in CSS pixels of the viewport), in the zoomed view.
  point(id) {
    const r = rowOf(id), d = state.detail;
    if (!r || !d || d.section !== r.section) return null;
    if (!d.canvas) {
      const b = state.buttons.get(id);
      if (!b) return null;
      const box = b.getBoundingClientRect();
      return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    }
    const [x, y] = cellOf(d.g, r, id), box = d.canvas.getBoundingClientRect();
    return { x: box.left + x + d.g.pitch / 2, y: box.top + y + d.g.pitch / 2 };
  },
};

document.addEventListener("DOMContentLoaded", wire);

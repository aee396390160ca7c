// The live seat map: a schedule's seats from GET /schedules/{id}/seats/events
// (Server-Sent Events; the browser reconnects with Last-Event-ID by itself),
// drawn row by row as the layout lays them out, and the checkout calls of
// the API: the seats the user clicks, or the best available ones.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  scheduleId: null,
  seats: new Map(),       // seatId -> status
  places: new Map(),      // seatId -> {label, category}
  buttons: new Map(),     // seatId -> button
  categories: [],         // the layout's categories, in order of first row
  selected: new Set(),
  hold: null,             // the user's current hold
  source: null,
  events: 0,
  pending: new Map(),     // seat changes not yet drawn
  frame: 0,
  busy: false,            // a best-available booking is under way
  reopen: 0,              // the timer that opens a refused stream again
  reopenAfter: 1000,      // its wait, doubled at each refusal up to 15 s
};

function token() { return $("token").value.trim(); }

function say(text) { $("message").textContent = text; }

// api calls the API; a problem answer throws an Error saying its detail,
// with the problem itself in error.problem.
async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + token() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = crypto.randomUUID();
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
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
  const wanted = new URLSearchParams(location.search).get("schedule");
  if (wanted && [...select.options].some((o) => o.value === wanted)) select.value = wanted;
  if (select.value) open(select.value);
}

// open streams the schedule's seat map, replacing the one shown.
function open(scheduleId) {
  if (state.source) state.source.close();
  clearTimeout(state.reopen);
  state.scheduleId = scheduleId;
  state.selected.clear();
  state.seats.clear();
  state.places.clear();
  state.pending.clear();
  $("seats").replaceChildren();
  state.buttons.clear();
  const source = new EventSource("/schedules/" + scheduleId + "/seats/events");
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
    const map = JSON.parse(e.data);
    drawAll(map.seats);
  });
  source.addEventListener("seat", (e) => {
    const change = JSON.parse(e.data);
    state.events++;
    state.pending.set(change.seatId, change.status);
    if (!state.frame) state.frame = requestAnimationFrame(flush);
  });
  source.addEventListener("resync", () => {
    // Fell behind: start over from a fresh snapshot.
    open(scheduleId);
  });
  document.body.dataset.schedule = scheduleId;
  selection();
}

// name is a seat's label ("C7"), or its id where the map has none.
function name(id) {
  const p = state.places.get(id);
  return p && p.label ? p.label : "seat " + id;
}

function names(ids) { return ids.map(name).join(", "); }

function describe(b, id, status) {
  const p = state.places.get(id);
  const category = p && p.category ? p.category : "";
  b.title = [name(id), category, status].filter(Boolean).join(" · ");
  b.setAttribute("aria-label", ["Seat " + name(id), category, status].filter(Boolean).join(", "));
}

// categoryClass gives each category its look: standard a neutral one,
// the others a colour each, in the order of their first row.
function categoryClass(category) {
  if (!category || category === "standard") return "cat-standard";
  const others = state.categories.filter((c) => c !== "standard");
  return "cat-" + (others.indexOf(category) % 7);
}

// drawAll draws the snapshot: one line per row of the layout (a long row
// wraps), its label first, each seat a button showing its number.
function drawAll(seats) {
  state.buttons.clear();
  state.seats.clear();
  state.places.clear();
  state.categories = [];
  for (const s of seats) {
    state.places.set(s.seatId, { label: s.label, category: s.category });
    if (s.category && !state.categories.includes(s.category)) state.categories.push(s.category);
  }
  const frag = document.createDocumentFragment();
  let rowKey, rowSeats;
  for (const s of seats) {
    const key = s.row === undefined ? "" : s.row;
    if (!rowSeats || key !== rowKey) {
      rowKey = key;
      const row = document.createElement("div");
      row.className = "row " + categoryClass(s.category);
      row.dataset.row = key;
      row.setAttribute("role", "group");
      row.setAttribute("aria-label", key === "" ? "Seats" : "Row " + key + (s.category ? ", " + s.category : ""));
      const label = document.createElement("span");
      label.className = "row-label";
      label.textContent = key;
      label.title = key === "" ? "" : "Row " + key + (s.category ? " · " + s.category : "");
      label.setAttribute("aria-hidden", "true");
      rowSeats = document.createElement("div");
      rowSeats.className = "row-seats";
      row.append(label, rowSeats);
      frag.appendChild(row);
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "seat " + s.status;
    b.textContent = s.number === undefined ? s.seatId : s.number;
    b.dataset.seat = s.seatId;
    b.dataset.status = s.status;
    describe(b, s.seatId, s.status);
    b.setAttribute("aria-pressed", state.selected.has(s.seatId) ? "true" : "false");
    rowSeats.appendChild(b);
    state.buttons.set(s.seatId, b);
    state.seats.set(s.seatId, s.status);
  }
  $("seats").replaceChildren(frag);
  for (const id of state.selected) if (state.seats.get(id) !== "available") state.selected.delete(id);
  legend();
  counts();
  selection();
}

// legend lists the categories with their look, and fills the category
// choice of the best-available control (keeping the one chosen).
function legend() {
  $("categories").replaceChildren(...state.categories.map((c) => {
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
  select.replaceChildren(any, ...state.categories.map((c) => {
    const o = document.createElement("option");
    o.value = c;
    o.textContent = c;
    return o;
  }));
  select.value = state.categories.includes(chosen) ? chosen : "";
}

// flush draws the changes of one animation frame: thousands of events a
// second cost one layout per frame.
function flush() {
  state.frame = 0;
  for (const [id, status] of state.pending) {
    state.seats.set(id, status);
    const b = state.buttons.get(id);
    if (!b) continue;
    b.className = "seat " + status;
    b.dataset.status = status;
    describe(b, id, status);
    if (status !== "available" && state.selected.delete(id)) b.setAttribute("aria-pressed", "false");
  }
  state.pending.clear();
  counts();
  selection();
}

function counts() {
  const n = { available: 0, held: 0, reserved: 0 };
  const free = new Map(), all = new Map();
  for (const [id, status] of state.seats) {
    n[status] = (n[status] || 0) + 1;
    const c = state.places.get(id)?.category;
    if (c === undefined) continue;
    all.set(c, (all.get(c) || 0) + 1);
    if (status === "available") free.set(c, (free.get(c) || 0) + 1);
  }
  $("count-available").textContent = n.available;
  $("count-held").textContent = n.held;
  $("count-reserved").textContent = n.reserved;
  for (const li of $("categories").children) {
    const c = li.dataset.category;
    li.querySelector(".free").textContent = (free.get(c) || 0) + " of " + (all.get(c) || 0) + " free";
  }
}

function toggle(id) {
  if (state.seats.get(id) !== "available" && !state.selected.has(id)) {
    say(name(id) + " is " + state.seats.get(id) + ".");
    return;
  }
  if (state.selected.has(id)) state.selected.delete(id);
  else if (state.selected.size < 10) state.selected.add(id);
  else { say("A hold takes at most 10 seats."); return; }
  state.buttons.get(id).setAttribute("aria-pressed", state.selected.has(id) ? "true" : "false");
  selection();
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

// bookBest holds the best available seats (POST /holds with a quantity)
// and books them at once (POST /holds/{id}/confirm).
async function bookBest() {
  const q = quantity();
  if (!Number.isInteger(q) || q < 1 || q > 10) throw new Error("choose 1 to 10 seats.");
  const category = $("best-category").value;
  const body = { scheduleId: Number(state.scheduleId), quantity: q };
  if (category) body.category = category;
  const what = q + (category ? " " + category : "") + (q === 1 ? " seat" : " seats");
  say("Finding the best " + what + "…");
  let hold;
  try {
    hold = await api("POST", "/holds", body);
  } catch (e) {
    const p = e.problem;
    if (p && p.code === "not_enough_seats" && typeof p.available === "number") {
      const free = p.available === 0 ? "no " + (category ? category + " " : "") + "seat is" :
        p.available + (category ? " " + category : "") + (p.available === 1 ? " seat is" : " seats are");
      throw new Error(free + " available, not " + q + (q > 1 ? " together" : "") + ". " + p.detail);
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
  try { say(await fn()); } catch (e) { say(action + " failed: " + e.message); }
  selection();
}

function wire() {
  $("token").value = localStorage.getItem("seatlock.token") || "";
  $("token").addEventListener("change", () => localStorage.setItem("seatlock.token", token()));
  $("schedule").addEventListener("change", (e) => open(e.target.value));
  // One listener for every seat, however many.
  $("seats").addEventListener("click", (e) => {
    const b = e.target.closest("button.seat");
    if (b) toggle(Number(b.dataset.seat));
  });
  $("hold").addEventListener("click", () => act("Hold", async () => {
    const seatIds = [...state.selected].sort((a, b) => a - b);
    state.hold = await api("POST", "/holds", { scheduleId: Number(state.scheduleId), seatIds });
    state.selected.clear();
    for (const b of state.buttons.values()) b.setAttribute("aria-pressed", "false");
    return "Held " + names(seatIds) + ".";
  }));
  $("book").addEventListener("click", () => act("Booking", async () => {
    const [seatId] = state.selected;
    const r = await api("POST", "/reservations", { scheduleId: Number(state.scheduleId), seatId });
    state.selected.clear();
    state.buttons.get(seatId)?.setAttribute("aria-pressed", "false");
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

document.addEventListener("DOMContentLoaded", wire);

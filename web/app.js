// The live seat map: a schedule's seats from GET /schedules/{id}/seats/events
// (Server-Sent Events; the browser reconnects with Last-Event-ID by itself),
// and the checkout calls of the API for the seats the user clicks.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  scheduleId: null,
  seats: new Map(),       // seatId -> status
  buttons: new Map(),     // seatId -> button
  selected: new Set(),
  hold: null,             // the user's current hold
  source: null,
  events: 0,
  pending: new Map(),     // seat changes not yet drawn
  frame: 0,
};

function token() { return $("token").value.trim(); }

function say(text) { $("message").textContent = text; }

async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + token() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = crypto.randomUUID();
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (!resp.ok) {
    const seats = data && data.seats ? " (" + data.seats.map((s) => "seat " + s.seatId + " " + s.reason).join(", ") + ")" : "";
    throw new Error((data && data.detail ? data.detail : resp.status + " " + resp.statusText) + seats);
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
  state.scheduleId = scheduleId;
  state.selected.clear();
  state.seats.clear();
  state.pending.clear();
  $("seats").replaceChildren();
  state.buttons.clear();
  const source = new EventSource("/schedules/" + scheduleId + "/seats/events");
  state.source = source;
  $("connection").textContent = "connecting";
  source.addEventListener("open", () => { $("connection").textContent = "live"; });
  source.addEventListener("error", () => { $("connection").textContent = "reconnecting"; });
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
}

function label(id, status) { return "Seat " + id + ", " + status; }

function drawAll(seats) {
  const frag = document.createDocumentFragment();
  state.buttons.clear();
  state.seats.clear();
  for (const s of seats) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "seat " + s.status;
    b.textContent = s.seatId;
    b.dataset.seat = s.seatId;
    b.dataset.status = s.status;
    b.setAttribute("aria-label", label(s.seatId, s.status));
    b.setAttribute("aria-pressed", state.selected.has(s.seatId) ? "true" : "false");
    b.addEventListener("click", () => toggle(s.seatId));
    frag.appendChild(b);
    state.buttons.set(s.seatId, b);
    state.seats.set(s.seatId, s.status);
  }
  $("seats").replaceChildren(frag);
  counts();
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
    b.setAttribute("aria-label", label(id, status));
    if (status !== "available" && state.selected.delete(id)) b.setAttribute("aria-pressed", "false");
  }
  state.pending.clear();
  counts();
  selection();
}

function counts() {
  const n = { available: 0, held: 0, reserved: 0 };
  for (const status of state.seats.values()) n[status] = (n[status] || 0) + 1;
  $("count-available").textContent = n.available;
  $("count-held").textContent = n.held;
  $("count-reserved").textContent = n.reserved;
}

function toggle(id) {
  if (state.seats.get(id) !== "available" && !state.selected.has(id)) {
    say("Seat " + id + " is " + state.seats.get(id) + ".");
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
  $("selection").textContent = ids.length ? "Selected: seat " + ids.join(", ") + "." : "No seat selected. Click available seats to select them (up to 10).";
  $("hold").disabled = ids.length === 0;
  $("book").disabled = ids.length !== 1;
  const active = state.hold && state.hold.status === "active";
  $("confirm").disabled = !active;
  $("release").disabled = !active;
  $("hold-state").textContent = state.hold
    ? "Your hold of seat " + state.hold.seatIds.join(", ") + " is " + state.hold.status +
      (state.hold.status === "active" ? " until " + new Date(state.hold.expiresAt).toLocaleTimeString() : "") + "."
    : "";
}

async function act(name, fn) {
  if (!token()) { say("Paste a bearer token first."); $("token").focus(); return; }
  try { say(await fn()); } catch (e) { say(name + " failed: " + e.message); }
  selection();
}

function wire() {
  $("token").value = localStorage.getItem("seatlock.token") || "";
  $("token").addEventListener("change", () => localStorage.setItem("seatlock.token", token()));
  $("schedule").addEventListener("change", (e) => open(e.target.value));
  $("hold").addEventListener("click", () => act("Hold", async () => {
    const seatIds = [...state.selected].sort((a, b) => a - b);
    state.hold = await api("POST", "/holds", { scheduleId: Number(state.scheduleId), seatIds });
    state.selected.clear();
    for (const b of state.buttons.values()) b.setAttribute("aria-pressed", "false");
    return "Held seat " + seatIds.join(", ") + ".";
  }));
  $("book").addEventListener("click", () => act("Booking", async () => {
    const [seatId] = state.selected;
    const r = await api("POST", "/reservations", { scheduleId: Number(state.scheduleId), seatId });
    state.selected.clear();
    state.buttons.get(seatId)?.setAttribute("aria-pressed", "false");
    return "Booked seat " + r.seatId + ".";
  }));
  $("confirm").addEventListener("click", () => act("Confirm", async () => {
    const r = await api("POST", "/holds/" + state.hold.id + "/confirm");
    state.hold = { ...state.hold, status: "confirmed" };
    return "Booked seat " + r.reservations.map((x) => x.seatId).join(", ") + ".";
  }));
  $("release").addEventListener("click", () => act("Release", async () => {
    await api("DELETE", "/holds/" + state.hold.id);
    state.hold = { ...state.hold, status: "released" };
    return "Released the hold.";
  }));
  setInterval(() => { $("rate").textContent = state.events; state.events = 0; }, 1000);
  selection();
  loadSchedules();
}

document.addEventListener("DOMContentLoaded", wire);

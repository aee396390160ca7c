// A typed call sequence over the types openapi-typescript generates from
// api/openapi.json (into gen/, which is not committed): scripts/test.sh
// generates them and compiles this file with tsc --strict, so a change to
// the document that breaks the TypeScript types, or changes the shapes
// used here, fails make test. It is compiled, never run.
import type { components, paths } from "./gen/openapi";

type Problem = components["schemas"]["Problem"];
type Reservation = components["schemas"]["Reservation"];
type ReserveRequest = paths["/reservations"]["post"]["requestBody"]["content"]["application/json"];
type HoldRequest = components["schemas"]["HoldRequest"];
type Hold = components["schemas"]["Hold"];
type SeatMapBody = paths["/schedules/{id}/seats"]["get"]["responses"][200]["content"]["application/json"];
type Ticket = components["schemas"]["Ticket"];

async function call<T>(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T | Problem> {
  const resp = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await resp.json()) as T | Problem;
}

function isProblem(v: object): v is Problem {
  return "code" in v && "status" in v && "title" in v;
}

// Problems are one type: code is a string union, status a number.
function retryable(p: Problem): boolean {
  const status: number = p.status;
  switch (p.code) {
    case "seat_taken":
      return false;
    case "seat_locked":
    case "seats_contended":
      return status === 409;
    default:
      return false;
  }
}

// The seat map's two forms are told apart by form.
function reservedSeats(m: SeatMapBody): number {
  switch (m.form) {
    case "full":
      return m.seats.filter((s) => s.status === "reserved").length;
    case "compact":
      return m.sections.reduce((n, s) => n + s.rows.reduce((k, r) => k + [...r.status].filter((c) => c === "r").length, 0), 0);
    default: {
      const never: never = m;
      return never;
    }
  }
}

export async function scenario(base: string, token: string, scheduleId: number): Promise<void> {
  const reserve: ReserveRequest = { scheduleId, seatId: 1 };
  const booked = await call<Reservation>(base, token, "POST", "/reservations", reserve);
  if (isProblem(booked) && !retryable(booked) && booked.code === "seat_taken") {
    const hold: HoldRequest = { scheduleId, quantity: 2 };
    const held = await call<Hold>(base, token, "POST", "/holds", hold);
    if (!isProblem(held)) {
      await call(base, token, "POST", `/holds/${held.id}/confirm`, {});
    }
  }
  const map = await call<SeatMapBody>(base, token, "GET", `/schedules/${scheduleId}/seats?form=compact`);
  if (!isProblem(map)) {
    reservedSeats(map);
  }
  const ticket = await call<Ticket>(base, token, "POST", `/schedules/${scheduleId}/queue`, {});
  if (!isProblem(ticket) && ticket.state === "admitted" && ticket.admission !== undefined) {
    await call<Reservation>(base, token, "POST", "/reservations", reserve, { Admission: ticket.admission });
  }
}

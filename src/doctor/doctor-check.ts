/** One thing production needs, as `giftjobs doctor` found it. */
export interface DoctorCheck {
  /** Short name: redis, eviction, persistence, memory, service, database, catalog. */
  name: string;
  ok: boolean;
  /** One line: what holds, or what is wrong and what to do. */
  detail: string;
}

export function passed(name: string, detail: string): DoctorCheck {
  return { name, ok: true, detail };
}

export function failed(name: string, detail: string): DoctorCheck {
  return { name, ok: false, detail };
}

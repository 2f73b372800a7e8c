// Small plots of the playback figures: one inline SVG line per series over its last minute,
// with the newest value, minimum and maximum in text beside and inside it (its title and label).

const svgNS = "http://www.w3.org/2000/svg";
const points = 60;

/** A series shown as a sparkline in `list` (a <ul>): `push` a value (or null) once a second. */
export class Sparkline {
  constructor(list, label, unit, digits = 0) {
    this.label = label;
    this.unit = unit;
    this.digits = digits;
    this.values = [];
    const item = document.createElement("li");
    const name = document.createElement("span");
    name.textContent = label;
    this.value = document.createElement("span");
    this.value.className = "value";
    this.value.textContent = "—";
    this.svg = document.createElementNS(svgNS, "svg");
    this.svg.setAttribute("viewBox", `0 0 ${points - 1} 100`);
    this.svg.setAttribute("preserveAspectRatio", "none");
    this.svg.setAttribute("role", "img");
    this.title = document.createElementNS(svgNS, "title");
    this.svg.append(this.title);
    this.line = document.createElementNS(svgNS, "polyline");
    this.svg.append(this.line);
    item.append(name, this.value, this.svg);
    list.append(item);
    this.describe();
  }

  format(v) { return v === null ? "—" : `${v.toFixed(this.digits)} ${this.unit}`; }

  push(v) {
    this.values.push(Number.isFinite(v) ? v : null);
    if (this.values.length > points) this.values.shift();
    this.value.textContent = this.format(this.values[this.values.length - 1]);
    this.draw();
    this.describe();
  }

  draw() {
    const known = this.values.filter((v) => v !== null);
    const top = Math.max(1e-9, ...known) * 1.15;
    const offset = points - this.values.length;
    const xy = [];
    this.values.forEach((v, i) => { if (v !== null) xy.push(`${offset + i},${(98 - (v / top) * 96).toFixed(1)}`); });
    this.line.setAttribute("points", xy.join(" "));
  }

  /** The text alternative: what the line shows, in words. */
  describe() {
    const known = this.values.filter((v) => v !== null);
    const text = known.length === 0
      ? `${this.label}: no figures yet`
      : `${this.label} over the last ${this.values.length} s: now ${this.format(known[known.length - 1])}, `
        + `lowest ${this.format(Math.min(...known))}, highest ${this.format(Math.max(...known))}`;
    this.title.textContent = text;
    this.svg.setAttribute("aria-label", text);
  }
}

/** Per-second rates of counters read once a second (`rate(name, total)`), from the second read on. */
export class Rates {
  constructor() { this.last = new Map(); }
  rate(name, total, now = performance.now()) {
    const before = this.last.get(name);
    this.last.set(name, { total, now });
    if (!before || total < before.total || now <= before.now) return null;
    return (total - before.total) / ((now - before.now) / 1000);
  }
}

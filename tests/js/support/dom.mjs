// jsdom documents for the DOM-capture and React tests.
import { JSDOM } from "jsdom";

export function makeDom(html = "") {
  const dom = new JSDOM(`<!doctype html><html><body>${html}</body></html>`, { pretendToBeVisual: true });
  return dom;
}

/** Installs a jsdom window as the global browser environment (React needs it at import time). */
export function installGlobals(dom) {
  const { window } = dom;
  const keys = ["window", "document", "navigator", "HTMLElement", "Node", "Event", "KeyboardEvent", "MouseEvent", "FocusEvent", "MutationObserver", "getComputedStyle", "requestAnimationFrame", "cancelAnimationFrame"];
  for (const key of keys) {
    Object.defineProperty(globalThis, key, { value: key === "window" ? window : window[key], configurable: true, writable: true });
  }
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
}

/** A controllable IntersectionObserver: tests call `FakeIO.trigger(el, true)`. */
export function fakeIntersectionObserver() {
  const instances = [];
  class FakeIO {
    constructor(callback) {
      this.callback = callback;
      this.targets = new Set();
      instances.push(this);
    }
    observe(el) {
      this.targets.add(el);
    }
    unobserve(el) {
      this.targets.delete(el);
    }
    disconnect() {
      this.targets.clear();
    }
    static trigger(changes) {
      for (const io of instances) {
        const entries = changes
          .filter(([el]) => io.targets.has(el))
          .map(([el, isIntersecting]) => ({ target: el, isIntersecting, boundingClientRect: el.getBoundingClientRect() }));
        if (entries.length) io.callback(entries, io);
      }
    }
  }
  FakeIO.instances = instances;
  return FakeIO;
}

export const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

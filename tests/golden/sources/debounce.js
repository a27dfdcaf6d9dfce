'use strict';

/**
 * Debounced search box: waits until the user stops typing, cancels the
 * request that is still in flight, and renders the newest results only.
 */

const DEFAULT_DELAY_MS = 250;

function debounce(fn, delay = DEFAULT_DELAY_MS) {
  let timer = null;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, delay);
  };
  debounced.cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  return debounced;
}

class SearchBox {
  constructor(input, list, { endpoint = '/api/search', limit = 20 } = {}) {
    this.input = input;
    this.list = list;
    this.endpoint = endpoint;
    this.limit = limit;
    this.controller = null;
    this.onInput = debounce(() => this.search(this.input.value.trim()));
    this.input.addEventListener('input', this.onInput);
  }

  async search(query) {
    if (this.controller) this.controller.abort();
    if (query.length < 2) {
      this.render([]);
      return;
    }
    this.controller = new AbortController();
    const url = `${this.endpoint}?q=${encodeURIComponent(query)}&limit=${this.limit}`;
    try {
      const response = await fetch(url, { signal: this.controller.signal });
      if (!response.ok) throw new Error(`search failed: HTTP ${response.status}`);
      const { items } = await response.json();
      this.render(items);
    } catch (err) {
      if (err.name !== 'AbortError') console.error(err);
    }
  }

  render(items) {
    this.list.replaceChildren(
      ...items.map((item) => {
        const li = document.createElement('li');
        li.textContent = `${item.title} — ${item.author ?? 'unknown'}`;
        li.dataset.id = String(item.id);
        return li;
      }),
    );
  }

  destroy() {
    this.onInput.cancel();
    this.input.removeEventListener('input', this.onInput);
    if (this.controller) this.controller.abort();
  }
}

module.exports = { debounce, SearchBox };

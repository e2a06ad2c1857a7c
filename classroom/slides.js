const pages = Array.from(document.querySelectorAll('.page'));
const channel = 'BroadcastChannel' in window ? new BroadcastChannel('tiledlab-slides') : null;
const presenter = new URLSearchParams(location.search).has('presenter');
const opened = Date.now();
let current = 0;
function fit(p) {  // shrink a long slide's text until it fits (slides keep their 16:9 box)
  const s = p.querySelector('.slide');
  s.style.fontSize = '';
  let size = parseFloat(getComputedStyle(s).fontSize);
  while ((s.scrollHeight > s.clientHeight + 1 || s.scrollWidth > s.clientWidth + 1) && size > 4) {
    size *= 0.95;
    s.style.fontSize = size + 'px';
  }
}
function show(n, echo = true) {
  current = Math.max(0, Math.min(pages.length - 1, n));
  pages.forEach((p, i) => {
    p.classList.toggle('current', i === current);
    p.classList.toggle('next', i === current + 1);
  });
  fit(pages[current]);
  if (presenter && pages[current + 1]) fit(pages[current + 1]);
  history.replaceState(null, '', location.search + '#' + (current + 1));
  if (echo && channel) channel.postMessage(current);
  clock();
}
function clock() {
  const s = Math.floor((Date.now() - opened) / 1000);
  document.getElementById('clock').textContent =
    `slide ${current + 1} / ${pages.length} · ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} since `
    + 'this view opened';
}
if (channel) channel.onmessage = e => show(e.data, false);
if (presenter) {
  document.body.classList.add('presenter');
  document.getElementById('page-size').textContent = '@page { size: 8.5in 11in; margin: 0.5in; }';
  setInterval(clock, 1000);
}
window.addEventListener('resize', () => fit(pages[current]));
window.addEventListener('beforeprint', () => pages.forEach(fit));
window.addEventListener('afterprint', () => show(current, false));
document.addEventListener('keydown', e => {
  if (['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Enter'].includes(e.key)) { show(current + 1); e.preventDefault(); }
  else if (['ArrowLeft', 'ArrowUp', 'PageUp', 'Backspace'].includes(e.key)) { show(current - 1); e.preventDefault(); }
  else if (e.key === 'Home') show(0);
  else if (e.key === 'End') show(pages.length - 1);
  else if (e.key === 'p' || e.key === 'P') window.print();
  else if ((e.key === 's' || e.key === 'S') && !presenter)
    window.open(location.pathname + '?presenter#' + (current + 1), 'tiledlab-presenter');
});
document.addEventListener('click', e => show(current + (e.clientX > window.innerWidth / 3 ? 1 : -1)));
show((parseInt(location.hash.slice(1), 10) || 1) - 1, false);

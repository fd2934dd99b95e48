// The survey page's script: one big button per department of the store, "Between departments" and "Stop"; a press
// posts a mark (/api/stores/N/survey/marks) for the beacon typed in or picked from the beacons the store hears now
// (kept in this browser for next time), and the page says what was marked or, in the server's own one line, why not.
// Every few seconds it reloads the store's departments, the seconds gathered in each and the beacons heard
// (/api/stores/N/survey). Data is only ever set as text, never as HTML;
// a 401 (the session ended) sends the browser to /login and back.
(function () {
  'use strict';
  var body = document.body;
  var store = body.getAttribute('data-store');
  var REFRESH_MS = 3000;
  var SAVED_BEACON = 'beaconmesh.survey.beacon';
  var data = null, loadedAt = 0, loadProblem = null, current = null, sending = false;

  function $(id) { return document.getElementById(id); }
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function clock(ms) {
    var d = new Date(ms);
    function two(n) { return (n < 10 ? '0' : '') + n; }
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
  }
  function gathered(seconds) {
    if (seconds < 60) return seconds + ' s';
    var s = seconds % 60;
    return Math.floor(seconds / 60) + ' min ' + (s < 10 ? '0' : '') + s + ' s';
  }
  function departmentName(number) {
    var found = data ? data.departments.filter(function (d) { return d.department === number; })[0] : null;
    return found ? found.name : 'Department ' + number;
  }
  function toLogin() { location.href = '/login?next=' + encodeURIComponent(location.pathname); }

  // A reply's JSON, or an error carrying the server's one line.
  function json(reply) {
    if (reply.status === 401) { toLogin(); return null; }
    if (!reply.ok) {
      return reply.text().then(function (text) { throw new Error(text.trim() || 'the dashboard answered ' + reply.status); });
    }
    return reply.json();
  }

  function renderStatus() {
    var status = $('status');
    while (status.firstChild) status.removeChild(status.firstChild);
    body.classList.toggle('connecting', !data);
    if (loadProblem !== null) {
      status.appendChild(make('span', 'problem', '⚠ ' + loadProblem));
    } else if (data && data.connection.state !== 'connected') {
      status.appendChild(make('span', 'problem', '⚠ The dashboard has lost the broker: marks cannot be sent now'));
    } else if (data) {
      status.appendChild(make('span', 'live', '● Live'));
      status.appendChild(document.createTextNode(' · ' + data.name + ' · updated ' + clock(loadedAt)));
    }
  }

  function renderDepartments() {
    var list = $('departments');
    var departments = data ? data.departments : [];
    var buttons = {};
    Array.prototype.forEach.call(list.querySelectorAll('button[data-department]'), function (button) {
      buttons[button.getAttribute('data-department')] = button;
    });
    departments.forEach(function (department, index) {
      var key = String(department.department);
      var button = buttons[key];
      delete buttons[key];
      if (!button) {
        button = make('button', 'mark department');
        button.type = 'button';
        button.setAttribute('data-department', key);
        button.appendChild(make('span', 'name'));
        button.appendChild(make('span', 'seconds'));
      }
      if (list.children[index] !== button) list.insertBefore(button, list.children[index] || null);
      button.querySelector('.name').textContent = department.name;
      button.querySelector('.seconds').textContent = gathered(department.seconds);
      button.disabled = !department.markable;
      button.title = department.markable ? '' : 'Not a department of the store now: its samples are kept';
      button.classList.toggle('current', !!current && !current.stop && current.department === department.department);
    });
    Object.keys(buttons).forEach(function (key) { list.removeChild(buttons[key]); });
    $('no-departments').hidden = departments.some(function (d) { return d.markable; });
    $('between').classList.toggle('current', !!current && !current.stop && current.department === null);
    $('stop').classList.toggle('current', !!current && current.stop);
    body.classList.toggle('sending', sending);
  }

  // What a heard beacon is called: its member's name, a reference and its department, or its key.
  function heardName(beacon) {
    if (beacon.member) return beacon.member.name;
    if (beacon.reference) return 'Reference in ' + departmentName(beacon.reference.department);
    return beacon.beacon;
  }

  function renderHeard() {
    var list = $('heard');
    var heard = data && data.heard ? data.heard : [];
    var chosen = $('beacon').value.trim().toLowerCase();
    while (list.firstChild) list.removeChild(list.firstChild);
    heard.forEach(function (beacon) {
      var button = make('button', 'heard');
      button.type = 'button';
      button.setAttribute('data-beacon', beacon.beacon);
      button.appendChild(make('span', 'who', heardName(beacon)));
      var where = Math.round(beacon.rssi) + ' dBm in ' + departmentName(beacon.department);
      button.appendChild(make('span', 'where', beacon.member || beacon.reference ? where + ' · ' + beacon.beacon : where));
      button.classList.toggle('chosen', beacon.beacon.toLowerCase() === chosen);
      var item = make('li');
      item.appendChild(button);
      list.appendChild(item);
    });
    $('no-heard').hidden = heard.length > 0;
  }

  function renderCurrent() {
    if (!current) return;
    var where = current.stop ? 'Stopped' : current.department === null ? 'Between departments'
                                                                        : 'In ' + departmentName(current.department);
    $('current').textContent = where + ' since ' + clock(current.at) + ' · ' + current.beacon;
  }

  function render() {
    renderStatus();
    renderDepartments();
    renderHeard();
    renderCurrent();
  }

  function say(text) { $('message').textContent = text ? '⚠ ' + text : ''; }

  function load() {
    fetch('/api/stores/' + store + '/survey', {credentials: 'same-origin', headers: {'Accept': 'application/json'}})
      .then(json)
      .then(function (reply) {
        if (!reply) return;
        data = reply;
        loadedAt = Date.now();
        loadProblem = null;
      })
      .catch(function (error) { loadProblem = error.message || String(error); })
      .then(function () {
        render();
        setTimeout(load, REFRESH_MS);
      });
  }

  function mark(department, stop) {
    var beacon = $('beacon').value.trim();
    if (!beacon) {
      say('Enter the beacon you carry first.');
      $('beacon').focus();
      return;
    }
    if (sending) return;
    var request = stop ? {beacon: beacon, stop: true} : {beacon: beacon, department: department};
    sending = true;
    render();
    fetch('/api/stores/' + store + '/survey/marks', {
      method: 'POST', credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', 'Accept': 'application/json'}, body: JSON.stringify(request)
    })
      .then(json)
      .then(function (published) {
        if (!published) return;
        current = {department: published.department, stop: !!published.stop, at: published.at, beacon: published.beacon};
        say('');
        try { localStorage.setItem(SAVED_BEACON, beacon); } catch (ignored) { /* private browsing: not kept */ }
      })
      .catch(function (error) { say(error.message || String(error)); })
      .then(function () {
        sending = false;
        render();
      });
  }

  $('departments').addEventListener('click', function (event) {
    var button = event.target.closest('button[data-department]');
    if (button && !button.disabled) mark(Number(button.getAttribute('data-department')), false);
  });
  $('heard').addEventListener('click', function (event) {
    var button = event.target.closest('button[data-beacon]');
    if (!button) return;
    $('beacon').value = button.getAttribute('data-beacon');
    say('');
    renderHeard();
  });
  $('beacon').addEventListener('input', renderHeard);
  $('between').addEventListener('click', function () { mark(null, false); });
  $('stop').addEventListener('click', function () { mark(null, true); });
  try { $('beacon').value = localStorage.getItem(SAVED_BEACON) || ''; } catch (ignored) { /* private browsing */ }
  load();
})();

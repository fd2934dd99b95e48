(function () {
  'use strict';
  var body = document.body;
  var page = body.getAttribute('data-page');
  var storeNumber = body.getAttribute('data-store');
  var STALE_AFTER_MS = 12000, HIGHLIGHT_MS = 1500, FLASH_MS = 1000;
  var source = null, streamOpen = false, lastMessageAt = 0, clockOffset = 0, data = null, flashUntil = 0;
  var photos = {};          // member id → data: URL, kept across messages
  var highlighted = {};     // member id → true while its arrival highlight runs (or ran for this arrival)

  function $(id) { return document.getElementById(id); }
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function serverNow() { return Date.now() + clockOffset; }
  function clock(ms) {
    var d = new Date(ms);
    function two(n) { return (n < 10 ? '0' : '') + n; }
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
  }
  function duration(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60 < 10 ? '0' : '') + (s % 60) + 's';
    var m = Math.floor((s % 3600) / 60);
    return Math.floor(s / 3600) + 'h ' + (m < 10 ? '0' : '') + m + 'm';
  }
  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }
  function replaceChildren(parent, children) {
    while (parent.firstChild) parent.removeChild(parent.firstChild);
    children.forEach(function (child) { parent.appendChild(child); });
  }

  // Why the data on screen may be out of date, or null when it is live.
  function staleness() {
    if (!streamOpen) return lastMessageAt ? 'Reconnecting to the dashboard… showing data from ' + clock(lastMessageAt) : 'Connecting to the dashboard…';
    if (Date.now() - lastMessageAt > STALE_AFTER_MS) return 'No update for ' + duration(Date.now() - lastMessageAt) + ' — data may be out of date';
    if (!data) return 'Waiting for data…';
    if (data.connection.state === 'lost') return 'Dashboard lost the broker at ' + clock(data.connection.since) + ' — data may be out of date';
    if (data.connection.state === 'connecting') return 'Dashboard is connecting to the broker…';
    if (page === 'store' && data.quiet) {
      return data.lastHeard ? 'Nothing heard from this store for ' + duration(serverNow() - data.lastHeard) + ' — data may be out of date'
                            : 'Nothing heard from this store yet';
    }
    return null;
  }

  function renderStatus() {
    var status = $('status');
    var problem = staleness();
    body.classList.toggle('stale', problem !== null);
    body.classList.toggle('connecting', !data);
    replaceChildren(status, []);
    if (problem !== null) {
      status.appendChild(make('span', 'problem', '⚠ ' + problem));
      return;
    }
    status.appendChild(make('span', 'live', '● Live'));
    if (page === 'store') {
      var coordinator = data.coordinator ? (data.coordinator.state === 'online' ? '' : ' · coordinator ' + data.coordinator.id + ' offline')
                                         : ' · no coordinator';
      status.appendChild(document.createTextNode(' · ' + plural(data.memberCount, 'member') + ' · ' + plural(data.guestCount, 'guest') +
        ' · updated ' + clock(data.updatedAt || data.now) + coordinator));
      if (data.survey) {
        status.appendChild(data.survey.state === 'stale' ? make('span', 'problem survey-stale', ' ⚠ ' + data.survey.message)
                                                         : document.createTextNode(' · decided from its survey'));
      }
      if (Date.now() < flashUntil) status.appendChild(make('span', 'flash', 'Presence change'));
    } else {
      status.appendChild(document.createTextNode(' · ' + data.broker + ' · ' + clock(data.now)));
    }
  }

  // MARK: store page

  function memberRow(member) {
    var row = make('tr');
    row.setAttribute('data-member', member.id);
    ['photo', 'name', 'drink', 'department', 'confidence', 'proximity-cell', 'time', 'visit'].forEach(function (name) { row.appendChild(make('td', name)); });
    return row;
  }
  function setText(cell, text) { if (cell.textContent !== text) cell.textContent = text; }
  function fillPhoto(cell, member) {
    var url = photos[member.id];
    if (url) {
      var img = cell.querySelector('img');
      if (!img) {
        replaceChildren(cell, []);
        img = make('img', 'avatar');
        img.alt = member.name;
        cell.appendChild(img);
      }
      if (img.getAttribute('src') !== url) img.setAttribute('src', url);
    } else if (!cell.querySelector('.initials') || cell.textContent !== member.initials) {
      var initials = make('span', 'avatar initials', member.initials);
      initials.setAttribute('aria-label', member.name);
      replaceChildren(cell, [initials]);
    }
  }
  function renderMembers() {
    var tbody = $('members').querySelector('tbody');
    var rows = {};
    Array.prototype.forEach.call(tbody.rows, function (row) { rows[row.getAttribute('data-member')] = row; });
    var present = {};
    data.members.forEach(function (member, index) {
      present[member.id] = true;
      if (member.photo) photos[member.id] = member.photo;
      var row = rows[member.id] || memberRow(member);
      var cells = row.cells;
      fillPhoto(cells[0], member);
      setText(cells[1], member.name);
      setText(cells[2], member.favoriteDrink || '—');
      // A null department: surely in the store, in no department surely ("unknown beats wrong").
      cells[3].classList.toggle('unknown', member.department === null);
      setText(cells[3], member.department === null ? 'unknown' : member.departmentName);
      setText(cells[4], member.confidence === null ? '—' : Math.round(member.confidence * 100) + '%');
      var proximity = cells[5].firstChild;
      if (!proximity) { proximity = make('span'); cells[5].appendChild(proximity); }
      proximity.className = 'proximity ' + member.proximity;
      setText(proximity, member.proximity);
      row.setAttribute('data-arrived-at', member.arrivedAt);
      setText(cells[6], duration(serverNow() - member.arrivedAt));
      setText(cells[7], '#' + member.visits);
      if (member.highlighted && !highlighted[member.id]) {
        highlighted[member.id] = true;
        row.classList.add('arrived');
        setTimeout(function () { row.classList.remove('arrived'); }, HIGHLIGHT_MS);
      } else if (!member.highlighted && highlighted[member.id] && !row.classList.contains('arrived')) {
        delete highlighted[member.id];
      }
      if (tbody.rows[index] !== row) tbody.insertBefore(row, tbody.rows[index] || null);
    });
    Object.keys(rows).forEach(function (id) {
      if (!present[id]) { tbody.removeChild(rows[id]); delete highlighted[id]; delete photos[id]; }
    });
    $('no-members').style.display = data.members.length ? 'none' : '';
    $('member-count').textContent = '(' + data.members.length + ')';
  }
  function renderStoreSide() {
    replaceChildren($('occupancy'), data.occupancy.map(function (d) {
      var li = make('li');
      li.setAttribute('data-department', d.department);
      li.appendChild(make('span', 'dept-name', d.name));
      li.appendChild(make('span', 'dept-count', plural(d.members, 'member') + ' · ' + plural(d.guests, 'guest')));
      return li;
    }));
    replaceChildren($('nodes'), data.nodes.length ? data.nodes.map(function (n) {
      var li = make('li', n.state);
      li.appendChild(make('span', null, n.departmentName + ' · ' + n.node));
      li.appendChild(make('span', 'node-state', n.state));
      return li;
    }) : [make('li', 'empty', 'No node heard yet.')]);
    replaceChildren($('promos'), data.promos.length ? data.promos.map(function (p) {
      var li = make('li');
      var text = make('span');
      text.appendChild(make('time', null, clock(p.at)));
      text.appendChild(document.createTextNode(p.title + ' → ' + p.member + ' (' + p.department + ')'));
      li.appendChild(text);
      return li;
    }) : [make('li', 'empty', 'No promo offered yet.')]);
    replaceChildren($('alerts'), data.alerts.length ? data.alerts.map(function (a) {
      var li = make('li', a.kind);
      li.setAttribute('data-rule', a.rule);
      li.appendChild(make('time', null, clock(a.at)));
      li.appendChild(document.createTextNode(a.text));
      li.appendChild(make('span', 'rule', a.rule));
      return li;
    }) : [make('li', 'empty', 'No alert yet.')]);
    replaceChildren($('events'), data.events.length ? data.events.map(function (e) {
      var li = make('li', e.type);
      li.appendChild(make('time', null, clock(e.at)));
      li.appendChild(document.createTextNode(e.text));
      if (e.why) li.appendChild(make('span', 'why', e.why));
      return li;
    }) : [make('li', 'empty', 'No event yet.')]);
  }
  function renderStore() {
    document.title = data.name + ' · BeaconMesh';
    setText($('title'), data.name + ' (store ' + data.store + ')');
    if (data.presenceChange) flashUntil = Date.now() + FLASH_MS;
    renderMembers();
    renderStoreSide();
  }

  // MARK: chain overview

  function storeCard(store) {
    var card = make('a', 'store-card' + (store.attention ? ' attention' : ''));
    card.href = '/stores/' + store.store;
    card.setAttribute('data-store', store.store);
    var title = make('h3', null, store.name + ' ');
    title.appendChild(make('span', 'number', '#' + store.store));
    card.appendChild(title);
    var headcount = make('div', 'headcount');
    var members = make('strong', 'members', store.members);
    headcount.appendChild(members);
    headcount.appendChild(document.createTextNode(store.members === 1 ? ' member · ' : ' members · '));
    headcount.appendChild(make('span', 'guests', store.guests));
    headcount.appendChild(document.createTextNode(store.guests === 1 ? ' guest' : ' guests'));
    card.appendChild(headcount);
    var departments = make('div', 'departments', store.departments.length ? 'Members by department: ' + store.departments.map(function (d) {
      return d.name + ' ' + d.members;
    }).join(' · ') : 'No departments heard yet');
    card.appendChild(departments);
    var meta = make('div', 'meta');
    meta.appendChild(make('span', 'nodes-online', store.nodesOnline + ' online'));
    meta.appendChild(document.createTextNode(' · '));
    meta.appendChild(make('span', 'nodes-offline' + (store.nodesOffline ? ' offline' : ''), store.nodesOffline + ' offline'));
    meta.appendChild(document.createTextNode(' · coordinator '));
    meta.appendChild(make('span', 'coordinator' + (store.coordinator && store.coordinator.state === 'online' ? '' : ' offline'),
      store.coordinator ? store.coordinator.id + ' ' + (store.held ? 'serving' : store.coordinator.state) : 'unknown'));
    if (store.standby.length) meta.appendChild(make('span', 'standby', ' · standing by: ' + store.standby.join(', ')));
    card.appendChild(meta);
    var problems = [];
    if (store.quiet) problems.push(store.lastHeard ? 'quiet for ' + duration(serverNow() - store.lastHeard) : 'never heard');
    if (store.nodesOffline) problems.push('offline: ' + store.offlineNodes.join(', '));
    if (store.survey && store.survey.state === 'stale') problems.push(store.survey.message);
    if (!store.coordinator) problems.push('no coordinator serves it');
    else if (store.coordinator.state !== 'online') problems.push('coordinator offline');
    else if (!store.held) problems.push('no coordinator holds it');
    if (problems.length) card.appendChild(make('div', 'problems', '⚠ ' + problems.join(' · ')));
    return card;
  }
  function renderChain() {
    setText($('total-stores'), String(data.totals.stores));
    setText($('total-members'), String(data.totals.members));
    setText($('total-guests'), String(data.totals.guests));
    setText($('total-offline'), String(data.totals.nodesOffline));
    setText($('total-attention'), String(data.totals.needAttention));
    replaceChildren($('stores'), data.stores.map(storeCard));
    $('no-stores').style.display = data.stores.length ? 'none' : '';
    replaceChildren($('coordinators'), data.coordinators.length ? data.coordinators.map(function (c) {
      var item = make('li', c.state, c.id + ' — ' + c.state + ' — stores ' + c.stores.join(', ') + ' — serving ' +
        (c.active.length ? c.active.join(', ') : 'none') + ' — since ' + clock(c.startedAt));
      (c.webhooks || []).forEach(function (w) {
        item.appendChild(make('div', 'webhook ' + w.state, 'webhook ' + w.name + ' — ' + (w.state === 'failing' ?
          'failing since ' + clock(w.since) + ' — ' + w.backlog + ' waiting — ' + w.error : 'ok — ' + w.backlog + ' waiting')));
      });
      return item;
    }) : [make('li', 'empty', 'No coordinator heard yet.')]);
  }

  // MARK: stream

  function render() {
    if (!data) return;
    if (page === 'store') renderStore(); else renderChain();
    renderStatus();
  }
  function tick() {
    if (data && page === 'store') {
      Array.prototype.forEach.call($('members').querySelector('tbody').rows, function (row) {
        setText(row.cells[6], duration(serverNow() - Number(row.getAttribute('data-arrived-at'))));
      });
    }
    renderStatus();
  }
  function connect() {
    source = new EventSource(page === 'store' ? '/stores/' + storeNumber + '/live' : '/live');
    source.onopen = function () { streamOpen = true; renderStatus(); };
    source.onmessage = function (event) {
      streamOpen = true;
      lastMessageAt = Date.now();
      data = JSON.parse(event.data);
      clockOffset = data.now - Date.now();
      render();
    };
    source.onerror = function () {
      streamOpen = false;
      renderStatus();
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        // Refused with 401: the session ended (signed out elsewhere, expired, dashboard restarted): sign in again.
        fetch('/api/stores', {credentials: 'same-origin'}).then(function (reply) {
          if (reply.status === 401) location.href = '/login?next=' + encodeURIComponent(location.pathname);
        }, function () {});
        setTimeout(connect, 2000);
      }
    };
  }
  connect();
  setInterval(tick, 1000);
})();
/// The OpenAPI 3.0 description of every JSON route the dashboard serves (`/api/openapi.json`): the chain and store
/// page data, a store's presence snapshot, its nodes (`nodes list --json`), its analytics and its survey (with `--db`: the seconds gathered per
/// department, and posting a mark), the health check, and this document. Other
/// programs build on these; a test runs schemathesis against a running dashboard to hold the document to the answers.
///
/// Errors are one line of text (`text/plain`): 400 a bad store number, period or survey mark, 401 no sign-in (with
/// `--users`), 403 a store the user may not see (or a mark another site's page posted), 404 a store not shown or not
/// heard yet (or a survey without `--db`), 413 and 415 a mark too large or not JSON, 503 a database that does not
/// answer or a broker that is lost.
public enum DashboardOpenAPI {
    public static let document = #"""
        {
          "openapi": "3.0.3",
          "info": {
            "title": "BeaconMesh dashboard",
            "version": "1",
            "description": "What beacon-dashboard serves as JSON: the chain and its stores as the live pages show them, the latest presence snapshot of a store (the contract's payload), and with --db a store's shopper analytics (the contract's analytics object) and its survey (the seconds gathered per department; a mark posted is published to the store's survey topic). With --users every route but /healthz needs sign-in (a session cookie from /login, or HTTP Basic), and a user sees only their stores."
          },
          "servers": [{"url": "/"}],
          "components": {
            "securitySchemes": {"basic": {"type": "http", "scheme": "basic"}},
            "parameters": {
              "store": {"name": "store", "in": "path", "required": true, "description": "The store's number, 0-65535.",
                        "schema": {"type": "integer", "minimum": 0, "maximum": 65535}}
            },
            "responses": {
              "BadRequest": {"description": "A bad store number, period or survey mark, in one line.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "Unauthorized": {"description": "Sign-in needed (with --users).", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "Forbidden": {"description": "The signed-in user may not see this store.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "NotFound": {"description": "The store is not shown by this dashboard, or nothing of it was heard yet.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "Unavailable": {"description": "The registry database does not answer, or the dashboard has lost the broker.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "TooLarge": {"description": "A survey mark over 4 KiB.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "NotJSON": {"description": "A survey mark that is not application/json.", "content": {"text/plain": {"schema": {"type": "string"}}}}
            },
            "schemas": {
              "Connection": {
                "type": "object", "required": ["state"],
                "properties": {"state": {"type": "string", "enum": ["connecting", "connected", "lost"]}, "since": {"type": "integer"}}
              },
              "Coordinator": {
                "type": "object", "nullable": true, "required": ["id", "state", "startedAt"],
                "properties": {"id": {"type": "string"}, "state": {"type": "string", "enum": ["online", "offline"]}, "startedAt": {"type": "integer"}}
              },
              "Occupancy": {
                "type": "object", "required": ["department", "name", "members", "guests"],
                "properties": {"department": {"type": "integer"}, "name": {"type": "string"}, "members": {"type": "integer"}, "guests": {"type": "integer"}}
              },
              "Chain": {
                "type": "object", "required": ["now", "broker", "connection", "stale", "totals", "stores", "coordinators"],
                "properties": {
                  "now": {"type": "integer"}, "broker": {"type": "string"}, "connection": {"$ref": "#/components/schemas/Connection"},
                  "stale": {"type": "boolean"},
                  "totals": {"type": "object", "required": ["stores", "members", "guests", "nodesOffline", "needAttention"],
                             "properties": {"stores": {"type": "integer"}, "members": {"type": "integer"}, "guests": {"type": "integer"},
                                            "nodesOffline": {"type": "integer"}, "needAttention": {"type": "integer"}}},
                  "stores": {"type": "array", "items": {
                    "type": "object", "required": ["store", "name", "members", "guests", "departments", "nodesOnline", "nodesOffline", "offlineNodes", "coordinator", "lastHeard", "quiet", "attention"],
                    "properties": {
                      "store": {"type": "integer"}, "name": {"type": "string"}, "members": {"type": "integer"}, "guests": {"type": "integer"},
                      "departments": {"type": "array", "items": {"$ref": "#/components/schemas/Occupancy"}},
                      "nodesOnline": {"type": "integer"}, "nodesOffline": {"type": "integer"},
                      "offlineNodes": {"type": "array", "items": {"type": "string"}},
                      "coordinator": {"$ref": "#/components/schemas/Coordinator"},
                      "lastHeard": {"type": "integer", "nullable": true}, "quiet": {"type": "boolean"}, "attention": {"type": "boolean"}}}},
                  "coordinators": {"type": "array", "items": {
                    "type": "object", "required": ["id", "state", "stores", "startedAt"],
                    "properties": {"id": {"type": "string"}, "state": {"type": "string"}, "stores": {"type": "array", "items": {"type": "integer"}},
                                   "startedAt": {"type": "integer"},
                                   "webhooks": {"type": "array", "items": {
                                     "type": "object", "required": ["name", "state", "backlog"],
                                     "properties": {"name": {"type": "string"}, "state": {"type": "string", "enum": ["ok", "failing"]},
                                                    "backlog": {"type": "integer"}, "error": {"type": "string", "nullable": true},
                                                    "since": {"type": "integer", "nullable": true}}}}}}}
                }
              },
              "Store": {
                "type": "object",
                "required": ["store", "name", "now", "broker", "connection", "stale", "hasSnapshot", "updatedAt", "lastHeard", "quiet", "memberCount", "guestCount", "members", "occupancy", "nodes", "events", "promos", "coordinator"],
                "properties": {
                  "store": {"type": "integer"}, "name": {"type": "string"}, "now": {"type": "integer"}, "broker": {"type": "string"},
                  "connection": {"$ref": "#/components/schemas/Connection"}, "stale": {"type": "boolean"}, "hasSnapshot": {"type": "boolean"},
                  "updatedAt": {"type": "integer", "nullable": true}, "lastHeard": {"type": "integer", "nullable": true},
                  "quiet": {"type": "boolean"}, "presenceChange": {"type": "boolean"},
                  "memberCount": {"type": "integer"}, "guestCount": {"type": "integer"},
                  "members": {"type": "array", "items": {
                    "type": "object", "required": ["id", "name", "initials", "favoriteDrink", "visits", "department", "departmentName", "proximity", "arrivedAt", "inDepartmentSince", "lastSeen"],
                    "properties": {
                      "id": {"type": "string"}, "name": {"type": "string"}, "initials": {"type": "string"},
                      "favoriteDrink": {"type": "string", "nullable": true}, "visits": {"type": "integer"},
                      "department": {"type": "integer", "nullable": true}, "departmentName": {"type": "string", "nullable": true},
                      "confidence": {"type": "number", "nullable": true}, "proximity": {"type": "string"},
                      "arrivedAt": {"type": "integer"}, "inDepartmentSince": {"type": "integer"}, "lastSeen": {"type": "integer"},
                      "highlighted": {"type": "boolean"}, "hasPhoto": {"type": "boolean"}, "photo": {"type": "string"}}}},
                  "occupancy": {"type": "array", "items": {"$ref": "#/components/schemas/Occupancy"}},
                  "nodes": {"type": "array", "items": {"type": "object", "required": ["department", "node", "state"],
                            "properties": {"department": {"type": "integer"}, "departmentName": {"type": "string"}, "node": {"type": "string"},
                                           "state": {"type": "string", "enum": ["online", "offline"]}}}},
                  "events": {"type": "array", "items": {"type": "object", "required": ["id", "type", "at", "text"],
                             "properties": {"id": {"type": "string"}, "type": {"type": "string"}, "at": {"type": "integer"},
                                            "text": {"type": "string"}, "why": {"type": "string", "nullable": true}}}},
                  "promos": {"type": "array", "items": {"type": "object", "required": ["member", "department", "title", "at"],
                             "properties": {"member": {"type": "string"}, "department": {"type": "string"}, "title": {"type": "string"},
                                            "at": {"type": "integer"}}}},
                  "coordinator": {"$ref": "#/components/schemas/Coordinator"}
                }
              },
              "PresenceSnapshot": {
                "type": "object", "required": ["v", "store", "updatedAt", "members", "occupancy", "nodes"],
                "description": "The contract's presence snapshot, as the coordinator published it.",
                "properties": {
                  "v": {"type": "integer", "enum": [1]}, "store": {"type": "integer"}, "name": {"type": "string"}, "updatedAt": {"type": "integer"},
                  "members": {"type": "array", "items": {"type": "object", "required": ["member", "department", "proximity", "arrivedAt"],
                              "properties": {"member": {"type": "object", "required": ["id", "name"]},
                                             "department": {"type": "integer", "nullable": true}, "departmentName": {"type": "string", "nullable": true},
                                             "proximity": {"type": "string"}, "arrivedAt": {"type": "integer"},
                                             "inDepartmentSince": {"type": "integer"}, "lastSeen": {"type": "integer"}, "confidence": {"type": "number"}}}},
                  "occupancy": {"type": "object", "additionalProperties": {"type": "object", "required": ["members", "guests"],
                                "properties": {"members": {"type": "integer"}, "guests": {"type": "integer"}, "name": {"type": "string"}}}},
                  "nodes": {"type": "array", "items": {"type": "object", "required": ["department", "node", "state"],
                            "properties": {"department": {"type": "integer"}, "node": {"type": "string"}, "state": {"type": "string"}}}}
                }
              },
              "Dwell": {
                "type": "object", "required": ["median", "p90"],
                "properties": {"median": {"type": "integer", "minimum": 0}, "p90": {"type": "integer", "minimum": 0}, "total": {"type": "integer", "minimum": 0}}
              },
              "Analytics": {
                "type": "object", "description": "The contract's analytics object for a store and the period [from, to); durations in seconds.",
                "required": ["v", "store", "from", "to", "visits", "dwellSeconds", "hourly", "departments", "flows", "checkins", "promos"],
                "properties": {
                  "v": {"type": "integer", "enum": [1]}, "store": {"type": "integer", "minimum": 0, "maximum": 65535},
                  "from": {"type": "integer"}, "to": {"type": "integer"},
                  "visits": {"type": "object", "required": ["members", "newMembers", "repeatMembers", "guests"],
                             "properties": {"members": {"type": "integer", "minimum": 0}, "newMembers": {"type": "integer", "minimum": 0},
                                            "repeatMembers": {"type": "integer", "minimum": 0}, "guests": {"type": "integer", "minimum": 0}}},
                  "dwellSeconds": {"$ref": "#/components/schemas/Dwell"},
                  "hourly": {"type": "array", "items": {"type": "object", "required": ["hour", "members", "guests"],
                             "properties": {"hour": {"type": "integer"}, "members": {"type": "integer"}, "guests": {"type": "integer"}}}},
                  "departments": {"type": "array", "items": {"type": "object", "required": ["department", "name", "visits", "dwellSeconds"],
                                  "properties": {"department": {"type": "integer"}, "name": {"type": "string"}, "visits": {"type": "integer"},
                                                 "dwellSeconds": {"$ref": "#/components/schemas/Dwell"}}}},
                  "flows": {"type": "array", "items": {"type": "object", "required": ["from", "to", "count"],
                            "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}, "count": {"type": "integer", "minimum": 1}}}},
                  "checkins": {"type": "object", "required": ["count", "visitsWithCheckin"],
                               "properties": {"count": {"type": "integer", "minimum": 0}, "visitsWithCheckin": {"type": "integer", "minimum": 0}}},
                  "promos": {"type": "array", "items": {"type": "object", "required": ["id", "department", "offers", "visitsWithCheckinAfter"],
                             "properties": {"id": {"type": "string"}, "department": {"type": "integer"}, "offers": {"type": "integer"},
                                            "visitsWithCheckinAfter": {"type": "integer"}}}}
                }
              },
              "Survey": {
                "type": "object", "description": "A store's survey as its survey page shows it: each department (those the dashboard knows of the store, markable, and those with samples only) and the seconds of samples gathered in it, and the beacons the store hears now, loudest first, with the member or reference each is.",
                "required": ["store", "name", "now", "connection", "departments", "heard"],
                "properties": {
                  "store": {"type": "integer", "minimum": 0, "maximum": 65535}, "name": {"type": "string"}, "now": {"type": "integer"},
                  "connection": {"$ref": "#/components/schemas/Connection"},
                  "departments": {"type": "array", "items": {"type": "object", "required": ["department", "name", "seconds", "markable"],
                                  "properties": {"department": {"type": "integer", "minimum": 0, "maximum": 65535}, "name": {"type": "string"},
                                                 "seconds": {"type": "integer", "minimum": 0}, "markable": {"type": "boolean"}}}},
                  "heard": {"type": "array", "items": {"type": "object", "required": ["beacon", "rssi", "department", "node"],
                            "properties": {"beacon": {"type": "string"}, "rssi": {"type": "number"},
                                           "department": {"type": "integer", "minimum": 0, "maximum": 65535}, "node": {"type": "string"},
                                           "member": {"type": "object", "required": ["id", "name"],
                                                      "properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
                                           "reference": {"type": "object", "required": ["department"],
                                                         "properties": {"department": {"type": "integer", "minimum": 0, "maximum": 65535}}}}}}
                }
              },
              "SurveyMarkRequest": {
                "type": "object", "description": "Where the surveyor carrying beacon is now: a department of the store, null between departments; stop true ends the survey of the beacon (department then not needed).",
                "required": ["beacon"],
                "properties": {"beacon": {"type": "string", "description": "A beacon key: ibeacon:<uuid>:<major>:<minor>, altbeacon:… or eddystone:…",
                                          "pattern": "^((ibeacon|altbeacon):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]{1,5}:[0-9]{1,5}|eddystone:[0-9a-f]{20}:[0-9a-f]{12})$"},
                               "department": {"type": "integer", "minimum": 0, "maximum": 65535, "nullable": true}, "stop": {"type": "boolean"}}
              },
              "SurveyMark": {
                "type": "object", "description": "The contract's survey mark as published, at the dashboard's time.",
                "required": ["v", "beacon", "department", "at"],
                "properties": {"v": {"type": "integer", "enum": [1]}, "beacon": {"type": "string"},
                               "department": {"type": "integer", "minimum": 0, "maximum": 65535, "nullable": true},
                               "at": {"type": "integer"}, "stop": {"type": "boolean", "enum": [true]}}
              },
              "NodeConfigReport": {
                "type": "object", "nullable": true, "required": ["revision", "state", "error"],
                "description": "What the node did with the latest node config of one level; null before it received one.",
                "properties": {"revision": {"type": "integer"}, "state": {"type": "string", "enum": ["applied", "refused"]},
                               "error": {"type": "string", "nullable": true}}
              },
              "Node": {
                "type": "object", "description": "One node as `nodes list --json` prints it: its retained status, and its latest health (null before one arrived).",
                "required": ["store", "department", "node", "state", "version", "boot", "source", "startedAt", "config", "uptime", "advertsPerSec", "lastHeard"],
                "properties": {
                  "store": {"type": "integer", "minimum": 0, "maximum": 65535}, "department": {"type": "integer", "minimum": 0, "maximum": 65535},
                  "node": {"type": "string"}, "state": {"type": "string", "enum": ["online", "offline"]}, "version": {"type": "string"},
                  "boot": {"type": "string"}, "source": {"type": "string"}, "startedAt": {"type": "integer"},
                  "config": {"type": "object", "required": ["store", "node"],
                             "properties": {"store": {"$ref": "#/components/schemas/NodeConfigReport"}, "node": {"$ref": "#/components/schemas/NodeConfigReport"}}},
                  "uptime": {"type": "integer", "nullable": true}, "advertsPerSec": {"type": "number", "nullable": true},
                  "lastHeard": {"type": "integer", "nullable": true}
                }
              },
              "Health": {
                "type": "object", "required": ["status", "broker", "stores", "pages"],
                "properties": {"status": {"type": "string", "enum": ["ok", "degraded"]}, "broker": {"type": "string", "enum": ["connected", "connecting", "lost"]},
                               "stores": {"type": "integer"}, "pages": {"type": "integer"}}
              }
            }
          },
          "security": [{}, {"basic": []}],
          "paths": {
            "/api/stores": {
              "get": {
                "summary": "The chain as the overview shows it: the stores the user may see.",
                "operationId": "chain",
                "responses": {
                  "200": {"description": "The chain.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Chain"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"}
                }
              }
            },
            "/api/stores/{store}": {
              "get": {
                "summary": "A store as its live page shows it.",
                "operationId": "store",
                "parameters": [{"$ref": "#/components/parameters/store"}],
                "responses": {
                  "200": {"description": "The store.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Store"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/stores/{store}/presence": {
              "get": {
                "summary": "The store's latest presence snapshot, as received from the coordinator.",
                "operationId": "presence",
                "parameters": [{"$ref": "#/components/parameters/store"}],
                "responses": {
                  "200": {"description": "The snapshot.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PresenceSnapshot"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/stores/{store}/nodes": {
              "get": {
                "summary": "The store's nodes as `nodes list --json` prints them, from their retained status and latest health.",
                "operationId": "nodes",
                "parameters": [{"$ref": "#/components/parameters/store"}],
                "responses": {
                  "200": {"description": "The nodes, by department and node.", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/stores/{store}/analytics": {
              "get": {
                "summary": "The store's shopper analytics for [from, to) (default the last 7 days); only with --db.",
                "operationId": "analytics",
                "parameters": [
                  {"$ref": "#/components/parameters/store"},
                  {"name": "from", "in": "query", "required": false, "description": "Epoch milliseconds or a local YYYY-MM-DD[THH:MM].",
                   "schema": {"type": "string", "pattern": "^([0-9]{1,15}|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2})?)$"}},
                  {"name": "to", "in": "query", "required": false, "description": "Epoch milliseconds or a local YYYY-MM-DD[THH:MM] (not included).",
                   "schema": {"type": "string", "pattern": "^([0-9]{1,15}|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2})?)$"}}
                ],
                "responses": {
                  "200": {"description": "The analytics object.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Analytics"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/stores/{store}/survey": {
              "get": {
                "summary": "The store's departments and the seconds of survey samples gathered in each; only with --db.",
                "operationId": "survey",
                "parameters": [{"$ref": "#/components/parameters/store"}],
                "responses": {
                  "200": {"description": "The survey.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Survey"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/stores/{store}/survey/marks": {
              "post": {
                "summary": "Publishes one survey mark of the store to its survey topic (QoS 1, the dashboard's time); only with --db. A browser's post from another site is refused (403).",
                "operationId": "surveyMark",
                "parameters": [{"$ref": "#/components/parameters/store"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SurveyMarkRequest"}}}},
                "responses": {
                  "200": {"description": "The mark, published.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SurveyMark"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"},
                  "413": {"$ref": "#/components/responses/TooLarge"}, "415": {"$ref": "#/components/responses/NotJSON"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/healthz": {
              "get": {
                "summary": "Health: the broker connection, stores heard and pages open (503 while the broker is lost).",
                "operationId": "health",
                "security": [{}],
                "responses": {
                  "200": {"description": "Healthy.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Health"}}}},
                  "503": {"description": "The broker is lost.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Health"}}}}
                }
              }
            },
            "/api/openapi.json": {
              "get": {
                "summary": "This document.",
                "operationId": "openapi",
                "responses": {
                  "200": {"description": "The OpenAPI document.", "content": {"application/json": {"schema": {"type": "object", "required": ["openapi", "paths"]}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"}
                }
              }
            }
          }
        }
        """#
}

#!/usr/bin/env ruby
# Records a database written by the real Flapjack 1.6 data layer (lib/flapjack/data of
# flapjack/flapjack at tag v1.6.0, loaded from FLAPJACK_LIB) into a Redis on REDIS_PORT, then
# dumps every key of that database as JSON (key, type, ttl, value) on stdout. See README.md.
#
# Flapjack's own code is loaded from outside this repository; this script only calls it.

require 'json'
require 'redis'

lib = ENV.fetch('FLAPJACK_LIB')
$LOAD_PATH.unshift(lib)

# flapjack/patches.rb patches thin, GLI and Redis::Future; only the last is used by the data
# layer (and only by reads). Debian has no ruby-thin worth pulling in for that, so mark the file
# loaded and provide the one patch here.
$LOADED_FEATURES << File.join(lib, 'flapjack', 'patches.rb')
class Redis
  class Future
    def class
      Future
    end
  end
end
# redis-rb 4.x answers EXISTS with an Integer (0 is true in Ruby); 1.6 was written against a
# redis-rb that answered true/false.
Redis.exists_returns_integer = false
# Debian packages chronic_duration as its GitLab fork (same ChronicDuration module, another file
# name); the data layer only requires it.
require 'gitlab_chronic_duration'
$LOADED_FEATURES << 'chronic_duration.rb'

require 'flapjack'
require 'flapjack/data/contact'
require 'flapjack/data/entity'
require 'flapjack/data/entity_check'
require 'flapjack/data/notification_rule'

redis = Redis.new(host: '127.0.0.1', port: Integer(ENV.fetch('REDIS_PORT')), db: 0)
redis.flushdb

# A fixed clock for everything the data layer lets us time; maintenance that must be current
# is placed around the real now, since 1.6 computes its expiry from Time.now.
base = 1_700_000_000
now = Time.now.to_i

Flapjack::Data::Entity.add({'id' => '5000', 'name' => 'www.example.com', 'tags' => ['web', 'prod']}, redis: redis)
Flapjack::Data::Entity.add({'id' => '5001', 'name' => 'db.example.com', 'tags' => ['db']}, redis: redis)
Flapjack::Data::Entity.add({'id' => '5002', 'name' => 'spare.example.com'}, redis: redis)

Flapjack::Data::Contact.add({'id' => '21', 'first_name' => 'Ada', 'last_name' => 'Lovelace',
  'email' => 'ada@example.com', 'timezone' => 'Europe/London',
  'media' => {
    'email' => {'address' => 'ada@example.com', 'interval' => 600, 'rollup_threshold' => 5},
    'sms' => {'address' => '+447700900123', 'interval' => 300},
    'jabber' => {'address' => 'ada@jabber.example.com'},
    'pagerduty' => {'service_key' => 'a1b2c3d4e5', 'subdomain' => 'analytical',
                    'token' => 'tok-21', 'username' => 'ada', 'password' => 'engine'}}}, redis: redis)
Flapjack::Data::Contact.add({'id' => '22', 'first_name' => 'Charles', 'last_name' => 'Babbage',
  'email' => 'charles@example.com',
  'media' => {'email' => {'address' => 'charles@example.com', 'interval' => 900}}}, redis: redis)
Flapjack::Data::Contact.add({'id' => 'ops-team', 'first_name' => 'Ops', 'last_name' => 'Team',
  'email' => 'ops@example.com'}, redis: redis)

ada = Flapjack::Data::Contact.find_by_id('21', redis: redis)
ada.add_notification_rule({id: 'rule-ada-web', entities: ['www.example.com'], regex_entities: [],
  tags: ['web'], regex_tags: [], time_restrictions: [
    {start_time: '2013-02-01 09:00:00', end_time: '2013-02-01 17:00:00',
     rrules: [{validations: {day: [1, 2, 3, 4, 5]}, rule_type: 'Weekly', interval: 1, week_start: 0}],
     exrules: [], rtimes: [], extimes: []}],
  unknown_media: [], warning_media: ['email'], critical_media: ['sms', 'email'],
  unknown_blackhole: true, warning_blackhole: false, critical_blackhole: false}, redis: redis)
babbage = Flapjack::Data::Contact.find_by_id('22', redis: redis)
babbage.add_notification_rule({id: 'rule-babbage-db', entities: [], regex_entities: ['^db\.'],
  tags: [], regex_tags: ['^d'], time_restrictions: [], unknown_media: ['email'],
  warning_media: ['email'], critical_media: ['email'],
  unknown_blackhole: false, warning_blackhole: true, critical_blackhole: false}, redis: redis)

www = Flapjack::Data::Entity.find_by_id('5000', redis: redis)
db = Flapjack::Data::Entity.find_by_id('5001', redis: redis)
ada.add_entity(www)
ada.add_entity(db)
babbage.add_entity(db)

ssh = Flapjack::Data::EntityCheck.for_entity(www, 'SSH', redis: redis)
ssh.update_state('ok', timestamp: base, summary: 'SSH OK', details: 'port 22 open')
ssh.update_state('critical', timestamp: base + 60, summary: 'SSH CRITICAL: refused', details: 'connection refused')
ssh.update_state('critical', timestamp: base + 120, summary: 'SSH CRITICAL: refused again')
ssh.update_state('ok', timestamp: base + 300, summary: 'SSH OK', details: 'port 22 open')
ssh.add_tags('remote')

http = Flapjack::Data::EntityCheck.for_entity(www, 'HTTP Port 80', redis: redis)
http.update_state('ok', timestamp: base + 10, summary: 'HTTP OK')
http.update_state('warning', timestamp: base + 400, summary: 'HTTP WARNING: slow', perfdata: 'time=2.5s;1;3;0')

disk = Flapjack::Data::EntityCheck.for_entity(db, 'Disk /var', redis: redis)
disk.update_state('ok', timestamp: base + 20, summary: 'DISK OK')
disk.update_state('critical', timestamp: base + 500, summary: 'DISK CRITICAL: 99% full')

# Scheduled maintenance: one past window, one around now, one to come.
ssh.create_scheduled_maintenance(base + 1000, 3600, summary: 'kernel upgrade')
ssh.create_scheduled_maintenance(now - 600, 7200, summary: 'datacentre move')
http.create_scheduled_maintenance(now + 86_400, 1800, summary: 'certificate renewal')
# Unscheduled maintenance (an acknowledgement): one finished, one current.
disk.create_unscheduled_maintenance(base + 600, 900, summary: 'looking into it')
disk.end_unscheduled_maintenance(base + 700)
disk.create_unscheduled_maintenance(now - 60, 14_400, summary: 'disk being replaced')

dump = redis.keys('*').sort.map do |key|
  type = redis.type(key)
  value = case type
          when 'string' then redis.get(key)
          when 'hash' then redis.hgetall(key)
          when 'set' then redis.smembers(key).sort
          when 'list' then redis.lrange(key, 0, -1)
          when 'zset' then redis.zrange(key, 0, -1, with_scores: true).map {|m, s| [m, s] }
          else raise "unexpected type #{type} of #{key}"
          end
  {'key' => key, 'type' => type, 'ttl' => redis.ttl(key), 'value' => value}
end
puts JSON.pretty_generate({'recorded_at' => now, 'keys' => dump})

package search

import "strings"

// services are the names of well-known online services and apps, lower
// case: a request that names one the catalog never mentions, and no
// family the catalog has, asks for a tool the catalog lacks ("create a
// Jira ticket" beside Linear, "post in #eng on Slack" with no Slack
// server). Names that are also common English words ("slack", "notion",
// "linear") count only written capitalized (see commonServices). Company
// names said as context ("since the last Google update"), browsers,
// operating systems, languages and databases are not in the list.
var services = toSet(`airbnb airtable alibaba amplitude asana atlassian audible auth0 autodesk
azuredevops bamboohr basecamp bigcommerce binance bitbucket bluesky brevo calendly canva
circleci clickup coinbase confluence coursera datadog deezer dialpad discord docusign doordash
dropbox duolingo ebay etsy eventbrite evernote expedia facebook figma firebase fitbit fiverr
freshbooks freshdesk github gitlab gmail gofundme goodreads greenhouse grubhub gusto heroku hubspot
icloud imdb instacart instagram intercom jenkins jira kayak klaviyo lastpass launchdarkly letterboxd
linkedin lyft mailchimp mailgun mastodon messenger miro mixpanel myfitnesspal
netflix netlify notion okta onedrive onenote opentable opsgenie outlook pagerduty pandora paypal
peloton pinterest pipedrive posthog postmark quickbooks reddit resy revolut ring robinhood salesforce
sendgrid sentry servicenow sharepoint shopify skype slack smartsheet snapchat soundcloud splunk
spotify squarespace steam strava stripe substack supabase surveymonkey telegram ticketmaster tiktok
tidal todoist trello tripadvisor tumblr twilio twitch twitter typeform uber ubereats udemy venmo
vercel webex webflow wechat whatsapp wix woocommerce wordpress workday wrike xero yelp youtube
youtrack zapier zendesk zillow zoho zoom`)

// commonServices are services whose names are also everyday words: they
// name the service only when written capitalized mid-sentence.
var commonServices = toSet(`amplitude asana audible basecamp confluence discord greenhouse gusto
intercom kayak linear messenger notion outlook pandora postmark ring sentry slack steam stripe
telegram tidal twitch workday zoom`)

// googleProducts are Google's services named by "google" and a word.
var googleProducts = toSet(`calendar drive docs sheets slides meet chat photos maps analytics ads classroom keep tasks forms`)

// integrationNouns, after a service's name, make it a part of what the
// catalog serves rather than a service asked for.
var integrationNouns = toSet(`hook hooks webhook webhooks gateway gateways integration integrations connector plugin plugins callback`)

// serviceOpeners, before a service's name, say it is where a thing goes.
var serviceOpeners = toSet(`to in on from via using`)

// namesAbsentService reports whether plain (a query without its quoted
// names) names, where it asks, a well-known service (see services) that
// the index never mentions. It asks in its only sentence, or in one that
// is a question, asks ("please", "can you") or opens with a verb — not in
// one that tells ("Customers are complaining on Twitter") — and not in a
// reason or the text to write (see splitArgClause); "a PagerDuty one" is
// one of something else. Going to a service's site is a browser's work:
// "go to YouTube and search for …" asks for no YouTube tool.
func (ix *Index) namesAbsentService(query, plain string) bool {
	var caps map[string]bool
	sents := sentences(plain)
	found := false
sents:
	for _, s := range sents {
		if len(sents) > 1 && !asks(s) {
			continue
		}
		head, _ := splitArgClause(s)
		ws := lowerWords(head)
		for i, w := range ws {
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
			// Google's products are services by their second word
			// ("google calendar" beside a catalog that has no calendar).
			if w == "google" && i+1 < len(ws) && googleProducts[ws[i+1]] {
				w = ws[i+1]
				if t, _ := wordTerm(w); len(ix.post[t]) == 0 {
					found = true
					break sents
				}
				continue
			}
			// "a PagerDuty one" is one of something else; "our Zapier
			// hook", "the Stripe gateway" are a part of this system's.
			if !services[w] || i+1 < len(ws) && (ws[i+1] == "one" || integrationNouns[ws[i+1]]) {
				continue
			}
			// The index has the word in its term form (supabase → supabas).
			if t, _ := wordTerm(w); len(ix.post[t]) > 0 {
				continue
			}
			if commonServices[w] {
				if caps == nil {
					caps = capitalized(query)
				}
				// A model's short query writes all in lower case: a
				// service first, or after to, in, on ("slack post
				// message", "post message to slack channel").
				typed := len(sents) == 1 && len(ws) <= 8 && strings.ToLower(query) == query && (i == 0 || serviceOpeners[ws[i-1]])
				if !caps[stem(w)] && !caps[w] && !typed {
					continue
				}
			}
			found = true
			break sents
		}
	}
	if !found {
		return false
	}
	for _, t := range Terms(plain) {
		if t == "navigat" || t == "visit" || t == "brows" || t == "open" {
			return false
		}
	}
	return true
}

// asks reports whether a sentence asks: a question, a request ("please",
// "can you"), or an imperative (its first word a verb's).
func asks(s string) bool {
	if strings.HasSuffix(s, "?") {
		return true
	}
	ws := lowerWords(s)
	for i, w := range ws {
		if asking[w] || i+1 < len(ws) && asking[w+"+"+ws[i+1]] {
			return true
		}
	}
	if len(ws) == 0 {
		return false
	}
	t, _ := wordTerm(ws[0])
	return verbs[t] || idiomWords[ws[0]]
}
